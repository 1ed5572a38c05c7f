import type { ServerResponse } from 'node:http';
import { errorReply } from './errors.js';
import { embeddingsBody } from './formats/catalog.js';
import { anthropic } from './formats/anthropic.js';
import type { WireFormat } from './formats/format.js';
import { openaiChat } from './formats/openai-chat.js';
import { openaiCompletions } from './formats/openai-completions.js';
import { openaiResponses } from './formats/openai-responses.js';
import { mockId, nowSeconds, planReply } from './reply.js';
import type { Behavior, Endpoint, MockRequest } from './types.js';

/**
 * The providers' own batch APIs, as the mock speaks them: OpenAI's Files + Batches (`POST /v1/files`
 * multipart, `GET /v1/files/{id}/content`, `POST /v1/batches`, `GET /v1/batches/{id}`, `POST
 * /v1/batches/{id}/cancel`, `GET /v1/batches?limit&after` newest first with `metadata`) and Anthropic's Message
 * Batches (`POST /v1/messages/batches`, `GET /v1/messages/batches/{id}`, `.../cancel`, `.../results` JSONL,
 * `GET /v1/messages/batches?limit&after_id` newest first). A batch answers `in_progress` to its first
 * `pollsBeforeEnd` retrievals, then ends with every line answered: each line is asked of the mock's
 * handlers like a request of its own (`endpoint` `openai.chat`, `anthropic.messages`...), so a test scripts
 * a line's failure with `mock.handle` (a `status` behavior becomes an error line).
 */

const OPENAI_FILE = /^\/v1\/files\/([^/]+)(\/content)?$/;
const OPENAI_BATCH = /^\/v1\/batches\/([^/]+)(\/cancel)?$/;
const ANTHROPIC_BATCH = /^\/v1\/messages\/batches\/([^/]+)(\/cancel|\/results)?$/;

/** The endpoint label of a batch API request, or undefined when the path is not one. */
export function batchEndpoint(method: string, path: string, headers: Record<string, string>): Endpoint | undefined {
  if (path === '/v1/files' || OPENAI_FILE.test(path)) return 'openai.files';
  if (path === '/v1/batches' || OPENAI_BATCH.test(path)) return 'openai.batches';
  if (path === '/v1/messages/batches' || ANTHROPIC_BATCH.test(path)) return 'anthropic.batches';
  void method;
  void headers;
  return undefined;
}

interface StoredFile {
  id: string;
  filename: string;
  purpose: string;
  content: string;
  created_at: number;
}

interface MockBatch {
  provider: 'openai' | 'anthropic';
  object: Record<string, any>;
  /** Retrievals answered so far. */
  polls: number;
  lines: { custom_id: string; url: string; body: any }[];
  cancelled: boolean;
  results?: string;
}

const LINE_FORMATS: Record<string, { endpoint: Endpoint; format?: WireFormat }> = {
  '/v1/chat/completions': { endpoint: 'openai.chat', format: openaiChat },
  '/v1/completions': { endpoint: 'openai.completions', format: openaiCompletions },
  '/v1/responses': { endpoint: 'openai.responses', format: openaiResponses },
  '/v1/embeddings': { endpoint: 'openai.embeddings' },
  '/v1/messages': { endpoint: 'anthropic.messages', format: anthropic },
};

/** The batch state of one mock server. */
export class MockBatchApis {
  readonly files = new Map<string, StoredFile>();
  readonly batches = new Map<string, MockBatch>();
  /** Retrievals that still answer `in_progress`. */
  pollsBeforeEnd = 1;
  /** Answers a call to the batch APIs itself instead of them when it returns a behavior (a 429 for one account...). */
  gate: ((req: MockRequest) => Behavior | undefined) | undefined;
  /** Every line the mock's batches answered, in order (`custom_id`, provider). */
  readonly answered: { provider: string; custom_id: string }[] = [];
  private counter = 0;

  constructor(
    private readonly choose: (req: MockRequest) => Promise<Behavior>,
    private readonly defaultText: () => string,
  ) {}

  reset(): void {
    this.files.clear();
    this.batches.clear();
    this.answered.length = 0;
    this.pollsBeforeEnd = 1;
    this.gate = undefined;
  }

  /** Answers one batch API request. */
  async serve(req: MockRequest, res: ServerResponse): Promise<void> {
    const { method, path } = req;
    if (method === 'POST' && path === '/v1/files') return this.upload(req, res);
    const file = OPENAI_FILE.exec(path);
    if (method === 'GET' && file) {
      const f = this.files.get(file[1]!);
      if (!f) return this.notFound(req, res);
      if (file[2]) return send(res, 200, f.content, 'application/octet-stream');
      return json(res, fileObject(f));
    }
    if (method === 'POST' && path === '/v1/batches') return this.createOpenai(req, res);
    if (method === 'GET' && path === '/v1/batches') return this.list(req, res, 'openai');
    if (method === 'GET' && path === '/v1/messages/batches') return this.list(req, res, 'anthropic');
    const ob = OPENAI_BATCH.exec(path);
    if (ob) return this.retrieve(req, res, ob[1]!, method === 'POST' && ob[2] === '/cancel', false);
    if (method === 'POST' && path === '/v1/messages/batches') return this.createAnthropic(req, res);
    const ab = ANTHROPIC_BATCH.exec(path);
    if (ab) {
      if (ab[2] === '/results') {
        const b = this.batches.get(ab[1]!);
        if (!b?.results) return this.notFound(req, res);
        return send(res, 200, b.results, 'application/binary');
      }
      return this.retrieve(req, res, ab[1]!, method === 'POST' && ab[2] === '/cancel', true);
    }
    return this.notFound(req, res);
  }

  /**
   * A page of one provider's batches, newest first: OpenAI `{object: 'list', data, first_id, last_id,
   * has_more}` paged by `after`; Anthropic `{data, has_more, first_id, last_id}` paged by `after_id` (the
   * openai and @anthropic-ai/sdk `BatchListParams` and their page classes).
   */
  private list(req: MockRequest, res: ServerResponse, provider: 'openai' | 'anthropic'): void {
    const all = [...this.batches.values()].filter((b) => b.provider === provider).reverse();
    const after = provider === 'openai' ? req.query.after : req.query.after_id;
    const from = after ? all.findIndex((b) => b.object.id === after) + 1 : 0;
    const limit = Math.max(1, Math.min(Number(req.query.limit ?? 20) || 20, provider === 'openai' ? 100 : 1000));
    const page = all.slice(from, from + limit).map((b) => b.object);
    const body = { data: page, first_id: page[0]?.id ?? null, last_id: page.at(-1)?.id ?? null, has_more: from + limit < all.length };
    json(res, provider === 'openai' ? { object: 'list', ...body } : body);
  }

  private notFound(req: MockRequest, res: ServerResponse): void {
    const reply = errorReply(req.provider, { status: 404, message: `No such object: ${req.path}` }, `req_${mockId(req)}`);
    res.writeHead(reply.status, reply.headers);
    res.end(reply.body);
  }

  private async upload(req: MockRequest, res: ServerResponse): Promise<void> {
    const form = await new Request('http://mock.invalid/', { method: 'POST', headers: { 'content-type': req.headers['content-type'] ?? '' }, body: new Uint8Array(req.bytes) }).formData();
    const file = form.get('file');
    if (!(file instanceof Blob) || form.get('purpose') !== 'batch') {
      res.writeHead(400, { 'content-type': 'application/json' });
      return void res.end(JSON.stringify({ error: { message: 'file and purpose=batch are required', type: 'invalid_request_error', param: 'file', code: null } }));
    }
    const f: StoredFile = { id: `file-mock${++this.counter}`, filename: (file as File).name ?? 'upload.jsonl', purpose: 'batch', content: await file.text(), created_at: nowSeconds() };
    this.files.set(f.id, f);
    json(res, fileObject(f));
  }

  private createOpenai(req: MockRequest, res: ServerResponse): void {
    const input = this.files.get(req.json?.input_file_id);
    if (!input) return this.notFound(req, res);
    const lines = input.content.split('\n').filter((l) => l.trim()).map((l) => JSON.parse(l));
    const id = `batch_mock${++this.counter}`;
    const object = {
      id,
      object: 'batch',
      endpoint: req.json.endpoint,
      errors: null,
      input_file_id: input.id,
      completion_window: req.json.completion_window,
      status: 'validating',
      output_file_id: null,
      error_file_id: null,
      created_at: nowSeconds(),
      in_progress_at: null,
      expires_at: nowSeconds() + 86_400,
      finalizing_at: null,
      completed_at: null,
      failed_at: null,
      expired_at: null,
      cancelling_at: null,
      cancelled_at: null,
      request_counts: { total: lines.length, completed: 0, failed: 0 },
      metadata: req.json.metadata ?? null,
    };
    this.batches.set(id, { provider: 'openai', object, polls: 0, lines, cancelled: false });
    json(res, object);
  }

  private createAnthropic(req: MockRequest, res: ServerResponse): void {
    const requests = (req.json?.requests ?? []) as { custom_id: string; params: any }[];
    const id = `msgbatch_mock${++this.counter}`;
    const object = {
      id,
      type: 'message_batch',
      processing_status: 'in_progress',
      request_counts: { processing: requests.length, succeeded: 0, errored: 0, canceled: 0, expired: 0 },
      ended_at: null,
      created_at: new Date().toISOString(),
      expires_at: new Date(Date.now() + 86_400_000).toISOString(),
      archived_at: null,
      cancel_initiated_at: null,
      results_url: null,
    };
    const lines = requests.map((r) => ({ custom_id: r.custom_id, url: '/v1/messages', body: r.params }));
    this.batches.set(id, { provider: 'anthropic', object, polls: 0, lines, cancelled: false });
    json(res, object);
  }

  private async retrieve(req: MockRequest, res: ServerResponse, id: string, cancel: boolean, isAnthropic: boolean): Promise<void> {
    const b = this.batches.get(id);
    if (!b || (b.provider === 'anthropic') !== isAnthropic) return this.notFound(req, res);
    if (cancel) {
      b.cancelled = true;
      if (b.provider === 'openai') Object.assign(b.object, { status: 'cancelling', cancelling_at: nowSeconds() });
      else Object.assign(b.object, { processing_status: 'canceling', cancel_initiated_at: new Date().toISOString() });
      return json(res, b.object);
    }
    const ended = b.provider === 'openai' ? ['completed', 'cancelled'].includes(b.object.status) : b.object.processing_status === 'ended';
    if (!ended) {
      if (b.polls++ >= this.pollsBeforeEnd || b.cancelled) await this.finish(req, b);
      else if (b.provider === 'openai') Object.assign(b.object, { status: 'in_progress', in_progress_at: nowSeconds() });
    }
    json(res, b.object);
  }

  /** Answers every line (none when cancelled) and ends the batch. */
  private async finish(outer: MockRequest, b: MockBatch): Promise<void> {
    const out: string[] = [];
    const errors: string[] = [];
    let ok = 0;
    let failed = 0;
    for (const [i, line] of b.lines.entries()) {
      if (b.cancelled) {
        if (b.provider === 'anthropic') out.push(JSON.stringify({ custom_id: line.custom_id, result: { type: 'canceled' } }));
        failed++;
        continue;
      }
      const answer = await this.answer(outer, line, i);
      this.answered.push({ provider: b.provider, custom_id: line.custom_id });
      if (answer.status === 200) ok++;
      else failed++;
      if (b.provider === 'openai') {
        const entry = JSON.stringify({ id: `batch_req_mock${i}`, custom_id: line.custom_id, response: { status_code: answer.status, request_id: `req_mock${i}`, body: answer.body }, error: null });
        (answer.status === 200 ? out : errors).push(entry);
      } else {
        const result = answer.status === 200 ? { type: 'succeeded', message: answer.body } : { type: 'errored', error: answer.body };
        out.push(JSON.stringify({ custom_id: line.custom_id, result }));
      }
    }
    const store = (lines: string[]) => {
      if (lines.length === 0) return null;
      const f: StoredFile = { id: `file-mock${++this.counter}`, filename: 'batch_output.jsonl', purpose: 'batch_output', content: `${lines.join('\n')}\n`, created_at: nowSeconds() };
      this.files.set(f.id, f);
      return f.id;
    };
    if (b.provider === 'openai') {
      Object.assign(b.object, {
        status: b.cancelled ? 'cancelled' : 'completed',
        [b.cancelled ? 'cancelled_at' : 'completed_at']: nowSeconds(),
        output_file_id: store(out),
        error_file_id: store(errors),
        request_counts: { total: b.lines.length, completed: ok, failed },
      });
    } else {
      b.results = `${out.join('\n')}\n`;
      Object.assign(b.object, {
        processing_status: 'ended',
        ended_at: new Date().toISOString(),
        results_url: `http://${outer.headers.host}/v1/messages/batches/${b.object.id}/results`,
        request_counts: { processing: 0, succeeded: ok, errored: b.cancelled ? 0 : failed, canceled: b.cancelled ? failed : 0, expired: 0 },
      });
    }
  }

  /** One line's answer: the mock's behavior for it as if it were a request of its own. */
  private async answer(outer: MockRequest, line: MockBatch['lines'][number], i: number): Promise<{ status: number; body: unknown }> {
    const kind = LINE_FORMATS[line.url] ?? LINE_FORMATS['/v1/chat/completions']!;
    const provider = kind.endpoint.startsWith('anthropic') ? 'anthropic' : 'openai';
    const text = JSON.stringify(line.body);
    const req: MockRequest = {
      index: outer.index * 100_000 + i,
      method: 'POST',
      path: line.url,
      query: {},
      headers: {},
      body: text,
      bytes: Buffer.from(text),
      json: line.body,
      endpoint: kind.endpoint,
      provider,
      model: line.body?.model,
      stream: false,
    };
    const b = await this.choose(req);
    if (b.type === 'status') {
      const reply = errorReply(provider, { status: b.status, message: b.message, errorType: b.errorType, code: b.code, model: req.model }, `req_mock${i}`);
      return { status: b.status, body: JSON.parse(reply.body) };
    }
    if (kind.endpoint === 'openai.embeddings') return { status: 200, body: embeddingsBody(req, 16) };
    const content = b.type === 'text' || b.type === 'tool-calls' || b.type === 'thinking' || b.type === 'max-tokens' || b.type === 'content-filter' ? b : { type: 'text' as const };
    const rc = { req, reply: planReply(content, req, this.defaultText()), model: req.model ?? 'mock-model', id: mockId(req), created: nowSeconds() };
    return { status: 200, body: kind.format!.json(rc) };
  }
}

function fileObject(f: StoredFile) {
  return { id: f.id, object: 'file', bytes: Buffer.byteLength(f.content), created_at: f.created_at, filename: f.filename, purpose: f.purpose, status: 'processed', status_details: null };
}

function send(res: ServerResponse, status: number, body: string, type: string): void {
  res.writeHead(status, { 'content-type': type, 'content-length': String(Buffer.byteLength(body)) });
  res.end(body);
}

function json(res: ServerResponse, body: unknown): void {
  send(res, 200, JSON.stringify(body), 'application/json');
}
