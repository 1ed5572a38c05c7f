import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { batchEndpoint, MockBatchApis } from './batches.js';
import { authErrorReply } from './errors.js';
import { isRerank, rerankEndpoint, rerankErrorReply } from './formats/rerank.js';
import { DEFAULT_MODELS } from './formats/catalog.js';
import { DEFAULT_TEXT } from './reply.js';
import { requestId, sendReply, serve, type ServeCtx } from './serve.js';
import busboy from 'busboy';
import type { Behavior, Endpoint, Handler, MockForm, MockRequest, MockUpstream, MockUpstreamOptions, Provider } from './types.js';

export type { Behavior, Handler, MockRequest, MockUpstream, MockUpstreamOptions } from './types.js';

const GEMINI_CALL = /^\/v1beta\/models\/(.+):(generateContent|streamGenerateContent|predict)$/;
const GEMINI_MODEL = /^\/v1beta\/models\/([^:]+)$/;

/** Decides endpoint, provider and model from the request line, headers and body. */
function classify(method: string, path: string, headers: Record<string, string>, json: any, form?: MockForm) {
  const post = method === 'POST';
  const rerank = rerankEndpoint(method, path);
  if (rerank) return { endpoint: rerank as Endpoint, provider: 'openai' as Provider, model: typeof json?.model === 'string' ? json.model : undefined };
  const get = method === 'GET';
  const batch = batchEndpoint(method, path, headers);
  if (batch) return { endpoint: batch, provider: (batch === 'anthropic.batches' ? 'anthropic' : 'openai') as Provider, model: undefined };
  const call = GEMINI_CALL.exec(path);
  if (post && call) {
    const endpoint: Endpoint = call[2] === 'generateContent' ? 'gemini.generate' : call[2] === 'predict' ? 'gemini.predict' : 'gemini.stream';
    return { endpoint, provider: 'gemini' as Provider, model: decodeURIComponent(call[1]!) };
  }
  if (path.startsWith('/v1beta')) {
    const one = GEMINI_MODEL.exec(path);
    const endpoint: Endpoint = get && path === '/v1beta/models' ? 'gemini.models' : get && one ? 'gemini.model' : 'unknown';
    return { endpoint, provider: 'gemini' as Provider, model: one ? decodeURIComponent(one[1]!) : undefined };
  }
  // `/v1/models` is shared: only Anthropic clients send `anthropic-version`.
  const provider: Provider =
    path.startsWith('/v1/messages') || (path === '/v1/models' && headers['anthropic-version']) ? 'anthropic' : 'openai';
  const routes: Record<string, Endpoint> = {
    'POST /v1/chat/completions': 'openai.chat',
    'POST /v1/responses': 'openai.responses',
    'POST /v1/completions': 'openai.completions',
    'POST /v1/embeddings': 'openai.embeddings',
    'POST /v1/images/generations': 'openai.images',
    'POST /v1/images/edits': 'openai.image_edits',
    'POST /v1/audio/speech': 'openai.speech',
    'POST /v1/audio/transcriptions': 'openai.transcriptions',
    'POST /v1/audio/translations': 'openai.translations',
    'POST /v1/moderations': 'openai.moderations',
    'POST /v1/messages': 'anthropic.messages',
    'POST /v1/messages/count_tokens': 'anthropic.count_tokens',
    'GET /v1/models': provider === 'anthropic' ? 'anthropic.models' : 'openai.models',
  };
  const formModel = form?.fields.model;
  const model = typeof json?.model === 'string' ? json.model : typeof formModel === 'string' ? formModel : undefined;
  return { endpoint: routes[`${method} ${path}`] ?? ('unknown' as Endpoint), provider, model };
}

function keyOf(req: MockRequest): string | undefined {
  if (req.provider === 'gemini') return req.headers['x-goog-api-key'] ?? req.query.key;
  const auth = req.headers.authorization;
  const bearer = auth?.startsWith('Bearer ') ? auth.slice('Bearer '.length) : undefined;
  // Anthropic's classic header is x-api-key, but @anthropic-ai/sdk 1.x sends the key as a Bearer token.
  if (req.provider === 'anthropic') return req.headers['x-api-key'] ?? bearer;
  return bearer;
}

async function readBody(raw: IncomingMessage): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const chunk of raw) parts.push(chunk as Buffer);
  return Buffer.concat(parts);
}

/** Parses a multipart/form-data body with busboy (as OpenAI's API accepts it); undefined for other bodies or a broken one. */
function parseForm(contentType: string | undefined, bytes: Buffer): Promise<MockForm | undefined> {
  if (!contentType?.toLowerCase().startsWith('multipart/form-data')) return Promise.resolve(undefined);
  return new Promise((resolve) => {
    const form: MockForm = { fields: {}, files: [] };
    let parser: busboy.Busboy;
    try {
      parser = busboy({ headers: { 'content-type': contentType } });
    } catch {
      return resolve(undefined);
    }
    parser.on('field', (name, value) => {
      const prev = form.fields[name];
      form.fields[name] = prev === undefined ? value : ([] as string[]).concat(prev, value);
    });
    parser.on('file', (field, stream, info) => {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        const data = Buffer.concat(chunks);
        form.files.push({ field, filename: info.filename ?? '', mimeType: info.mimeType, size: data.length, data });
      });
    });
    parser.on('close', () => resolve(form));
    parser.on('error', () => resolve(undefined));
    parser.end(bytes);
  });
}

/**
 * Starts a mock of the OpenAI, Anthropic and Gemini HTTP APIs on one loopback port.
 * Each request is answered by the first queued behavior, else the newest handler that returns one,
 * else a default text reply in the endpoint's own format.
 */
export async function startMockUpstream(opts: MockUpstreamOptions = {}): Promise<MockUpstream> {
  const requests: MockRequest[] = [];
  let handlers: Handler[] = [];
  let queue: Behavior[] = [];
  let waiters: { count: number; resolve: () => void }[] = [];
  let counter = 0;
  const sockets = new Set<Socket>();
  const models = { ...DEFAULT_MODELS, ...opts.models } as Record<Provider, string[]>;

  async function choose(req: MockRequest): Promise<Behavior> {
    const queued = queue.shift();
    if (queued) return queued;
    for (let i = handlers.length - 1; i >= 0; i--) {
      const b = await handlers[i]!(req);
      if (b) return b;
    }
    return { type: 'text' };
  }

  const batches = new MockBatchApis(choose, () => opts.text ?? DEFAULT_TEXT);

  async function onRequest(raw: IncomingMessage, res: ServerResponse): Promise<void> {
    const bytes = await readBody(raw);
    const body = bytes.toString('utf8');
    const url = new URL(raw.url ?? '/', 'http://mock');
    const headers: Record<string, string> = {};
    for (const [k, v] of Object.entries(raw.headers)) if (v !== undefined) headers[k] = Array.isArray(v) ? v.join(', ') : v;
    let json: any;
    try {
      json = body ? JSON.parse(body) : undefined;
    } catch {
      json = undefined;
    }
    const method = raw.method ?? 'GET';
    const form = await parseForm(headers['content-type'], bytes);
    const { endpoint, provider, model } = classify(method, url.pathname, headers, json, form);
    const req: MockRequest = {
      index: counter++,
      method,
      path: url.pathname,
      query: Object.fromEntries(url.searchParams),
      headers,
      body,
      json,
      bytes,
      form,
      endpoint,
      provider,
      model,
      stream: endpoint === 'gemini.stream' || json?.stream === true || form?.fields.stream === 'true',
    };
    requests.push(req);
    waiters = waiters.filter((w) => (requests.length >= w.count ? (w.resolve(), false) : true));

    if (opts.requireKey !== undefined && keyOf(req) !== opts.requireKey) {
      if (isRerank(endpoint)) return sendReply(res, rerankErrorReply(endpoint, 401, undefined, req.index));
      return sendReply(res, authErrorReply(provider, requestId(req), opts.geminiAuthStatus ?? 401));
    }
    const gated = endpoint === 'openai.files' || endpoint === 'openai.batches' || endpoint === 'anthropic.batches' ? (batches.gate?.(req) ?? 'serve') : undefined;
    if (gated === 'serve') return batches.serve(req, res);
    const abort = new AbortController();
    res.on('close', () => {
      if (!res.writableFinished) req.aborted = true;
      abort.abort();
    });
    const ctx: ServeCtx = {
      req,
      raw,
      res,
      signal: abort.signal,
      defaultText: opts.text ?? DEFAULT_TEXT,
      models,
      embeddingDimensions: opts.embeddingDimensions ?? 16,
      baseUrl: `http://${raw.headers.host ?? '127.0.0.1'}`,
    };
    await serve(ctx, gated ?? (await choose(req)));
  }

  const server = createServer((raw, res) => {
    onRequest(raw, res).catch((err: unknown) => {
      // A broken behavior should fail the test loudly, not leave the client waiting.
      console.error('[mock upstream]', err);
      if (!res.headersSent) {
        res.writeHead(500, { 'content-type': 'text/plain' });
        res.end(`mock upstream error: ${(err as Error).message}`);
      } else res.destroy();
    });
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, opts.host ?? '127.0.0.1', () => resolve());
  });
  const { port, address } = server.address() as AddressInfo;
  const url = `http://${address.includes(':') ? `[${address}]` : address}:${port}`;

  return {
    url,
    openaiBase: `${url}/v1`,
    anthropicBase: `${url}/v1`,
    geminiBase: `${url}/v1beta`,
    cohereBase: `${url}/compatibility/v1`,
    jinaBase: `${url}/v1`,
    voyageBase: `${url}/voyage/v1`,
    teiBase: `${url}/tei`,
    requests,
    batches,
    handle(fn) {
      handlers.push(fn);
      return () => {
        handlers = handlers.filter((h) => h !== fn);
      };
    },
    enqueue(...behaviors) {
      queue.push(...behaviors);
    },
    reset() {
      handlers = [];
      queue = [];
      requests.length = 0;
      counter = 0;
      batches.reset();
    },
    waitForRequests(count, timeoutMs = 5000) {
      if (requests.length >= count) return Promise.resolve(requests.slice());
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          waiters = waiters.filter((w) => w !== waiter);
          reject(new Error(`mock upstream: ${requests.length} of ${count} requests after ${timeoutMs} ms`));
        }, timeoutMs);
        const waiter = { count, resolve: () => (clearTimeout(timer), resolve(requests.slice())) };
        waiters.push(waiter);
      });
    },
    openConnections: () => sockets.size,
    async close() {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const socket of sockets) socket.destroy();
      await closed;
      // 'close' on a destroyed socket is emitted on a later tick; wait so openConnections() reads 0.
      for (let i = 0; i < 100 && sockets.size > 0; i++) await new Promise((r) => setTimeout(r, 5));
    },
  };
}
