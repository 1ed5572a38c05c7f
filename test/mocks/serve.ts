import type { IncomingMessage, ServerResponse } from 'node:http';
import { errorReply, statusText, type ErrorReply } from './errors.js';
import { anthropicModelList, embeddingsBody, geminiModel, geminiModelList, openaiModelList } from './formats/catalog.js';
import { anthropic } from './formats/anthropic.js';
import type { RenderCtx, WireFormat } from './formats/format.js';
import { gemini } from './formats/gemini.js';
import { openaiChat } from './formats/openai-chat.js';
import { openaiCompletions } from './formats/openai-completions.js';
import { openaiResponses } from './formats/openai-responses.js';
import { isRerank, rerankErrorReply, rerankReply } from './formats/rerank.js';
import { loadRecording } from './recordings.js';
import {
  geminiImageBody,
  geminiImageSse,
  imageStreamEvents,
  imagenBody,
  imagesBody,
  moderationBody,
  speechChunks,
  speechContentType,
  speechSse,
  transcriptionBody,
  transcriptionSse,
  transcriptionStreams,
} from './formats/media.js';
import { inputTokensFor, mockId, nowSeconds, planReply } from './reply.js';
import type { Behavior, ContentBehavior, Endpoint, MockRequest, Provider } from './types.js';
import { byteChunks, sleep, sseEvents, writeFrames, type Transport } from './wire.js';

/** What the server knows while answering one request. */
export interface ServeCtx {
  req: MockRequest;
  raw: IncomingMessage;
  res: ServerResponse;
  /** Aborts when the response closes (client gone or `close()`), so waits stop with it. */
  signal: AbortSignal;
  defaultText: string;
  models: Record<Provider, string[]>;
  embeddingDimensions: number;
  /** `http://host:port` of the mock as the client addressed it (image URLs). */
  baseUrl: string;
}

const FORMATS: Partial<Record<Endpoint, WireFormat>> = {
  'openai.chat': openaiChat,
  'openai.completions': openaiCompletions,
  'openai.responses': openaiResponses,
  'anthropic.messages': anthropic,
  'gemini.generate': gemini,
  'gemini.stream': gemini,
};

export function requestId(req: MockRequest): string {
  return `req_${mockId(req, 'request-id')}`;
}

function idHeaders(req: MockRequest): Record<string, string> {
  if (req.provider === 'anthropic') return { 'request-id': requestId(req) };
  if (req.provider === 'openai') return { 'x-request-id': requestId(req) };
  return {};
}

export function sendReply(res: ServerResponse, reply: ErrorReply): void {
  if (res.headersSent) return void res.destroy();
  res.writeHead(reply.status, statusText(reply.status), {
    ...reply.headers,
    'content-length': String(Buffer.byteLength(reply.body)),
  });
  res.end(reply.body);
}

function sendJson(ctx: ServeCtx, body: unknown, contentType = 'application/json', t?: Transport, extra?: Record<string, string>): Promise<void> | void {
  const text = JSON.stringify(body);
  const headers = { 'content-type': contentType, ...idHeaders(ctx.req), ...extra };
  if (t?.dropAfter === undefined) return sendReply(ctx.res, { status: 200, headers, body: text });
  // A dropped JSON reply: half the body arrives, then the connection dies.
  ctx.res.writeHead(200, headers);
  const cut = Math.floor(text.length / 2);
  return writeFrames(ctx.res, [text.slice(0, cut), text.slice(cut)], { ...t, dropAfter: 1 }, ctx.signal);
}

function openStream(ctx: ServeCtx, contentType: string, extra?: Record<string, string>): void {
  ctx.res.writeHead(200, { 'content-type': contentType, 'cache-control': 'no-cache', ...idHeaders(ctx.req), ...extra });
  ctx.res.flushHeaders();
}

function renderCtx(ctx: ServeCtx, b: ContentBehavior): RenderCtx {
  const { req } = ctx;
  return { req, reply: planReply(b, req, ctx.defaultText), model: b.model ?? req.model ?? 'mock-model', id: mockId(req), created: nowSeconds() };
}

/** Answers a content behavior (or any behavior) on endpoints whose answer is not a generated reply. */
async function serveContent(ctx: ServeCtx, b: ContentBehavior, t: Transport): Promise<void> {
  const { req } = ctx;
  if (MEDIA.has(req.endpoint) || ((req.endpoint === 'gemini.generate' || req.endpoint === 'gemini.stream') && wantsImage(req))) return serveMedia(ctx, b, t);
  const format = FORMATS[req.endpoint];
  if (isRerank(req.endpoint)) return sendReply(ctx.res, rerankReply(req, req.endpoint));
  if (format) {
    const rc = renderCtx(ctx, b);
    if (!req.stream) return sendJson(ctx, format.json(rc), format.jsonContentType, t, b.headers);
    openStream(ctx, format.sseContentType, b.headers);
    return writeFrames(ctx.res, format.stream(rc), t, ctx.signal);
  }
  switch (req.endpoint) {
    case 'openai.embeddings':
      return sendJson(ctx, embeddingsBody(req, ctx.embeddingDimensions), undefined, t);
    case 'openai.models':
      return sendJson(ctx, openaiModelList(ctx.models.openai), undefined, t);
    case 'anthropic.models':
      return sendJson(ctx, anthropicModelList(ctx.models.anthropic), undefined, t);
    case 'anthropic.count_tokens':
      return sendJson(ctx, { input_tokens: b.usage?.inputTokens ?? inputTokensFor(req) }, undefined, t);
    case 'gemini.models':
      return sendJson(ctx, geminiModelList(ctx.models.gemini), 'application/json; charset=UTF-8', t);
    case 'gemini.model':
      return sendJson(ctx, geminiModel(req.model ?? 'unknown'), 'application/json; charset=UTF-8', t);
    default: {
      const message = `Invalid URL (${req.method} ${req.path})`;
      return sendReply(ctx.res, errorReply(req.provider, { status: 404, message, model: req.model }, requestId(req)));
    }
  }
}

/** Runs one behavior to completion; wrappers adjust the transport and recurse into their inner behavior. */
export async function serve(ctx: ServeCtx, b: Behavior, t: Transport = { intervalMs: 0 }): Promise<void> {
  const { req, res } = ctx;
  const text = (): Behavior => ({ type: 'text' });
  switch (b.type) {
    case 'text':
    case 'tool-calls':
    case 'thinking':
    case 'max-tokens':
    case 'content-filter':
      return serveContent(ctx, b, t);
    case 'delay':
      if (await sleep(b.ms, ctx.signal)) await serve(ctx, b.then ?? text(), t);
      return;
    case 'slow-stream':
      return serve(ctx, b.then ?? text(), { ...t, intervalMs: b.intervalMs });
    case 'drop-mid-stream':
      return serve(ctx, b.then ?? { type: 'text', chunks: 6 }, { ...t, dropAfter: b.afterChunks ?? 2 });
    case 'stall-mid-stream':
      return serve(ctx, b.then ?? { type: 'text', chunks: 6 }, { ...t, stallAfter: b.afterChunks ?? 2 });
    case 'hang':
      // Never answer: the socket stays open until the client gives up or close() destroys it.
      return;
    case 'status': {
      if (isRerank(req.endpoint)) {
        const reply = rerankErrorReply(req.endpoint, b.status, b.message, req.index);
        if (b.body !== undefined) reply.body = typeof b.body === 'string' ? b.body : JSON.stringify(b.body);
        Object.assign(reply.headers, b.headers);
        return sendReply(res, reply);
      }
      const spec = { status: b.status, message: b.message, errorType: b.errorType, code: b.code, model: req.model };
      const reply = errorReply(req.provider, spec, requestId(req));
      if (b.body !== undefined) reply.body = typeof b.body === 'string' ? b.body : JSON.stringify(b.body);
      Object.assign(reply.headers, idHeaders(req), b.headers);
      return sendReply(res, reply);
    }
    case 'empty-stream':
      openStream(ctx, req.stream ? FORMATS[req.endpoint]?.sseContentType ?? 'text/event-stream' : 'application/json');
      res.end();
      return;
    case 'garbage': {
      if (req.stream) {
        openStream(ctx, FORMATS[req.endpoint]?.sseContentType ?? 'text/event-stream');
        const body = b.body ?? 'data: {"id": "broken", "choices": [\n\nevent: message_start\ndata: <html>oops</html>\n\n';
        return writeFrames(res, [body], t, ctx.signal);
      }
      return sendReply(res, {
        status: 200,
        headers: { 'content-type': 'application/json', ...idHeaders(req) },
        body: b.body ?? '<html><body>this is not JSON</body></html>',
      });
    }
    case 'stream-error': {
      const format = FORMATS[req.endpoint];
      const status = b.status ?? (req.provider === 'anthropic' ? 529 : 500);
      const spec = { status, message: b.message, errorType: b.errorType };
      if (!format || !req.stream) {
        return sendReply(res, errorReply(req.provider, { ...spec, model: req.model }, requestId(req)));
      }
      const rc = renderCtx(ctx, { type: 'text', chunks: 6 });
      const sent = format.stream(rc).slice(0, b.afterChunks ?? 2);
      openStream(ctx, format.sseContentType);
      return writeFrames(res, [...sent, format.streamError(rc, spec, sent.length)], t, ctx.signal);
    }
    case 'replay':
      return serveReplay(ctx, b, t);
    case 'custom':
      return b.fn(req, res, ctx.raw);
  }
}

const MEDIA: ReadonlySet<Endpoint> = new Set([
  'openai.images',
  'openai.image_edits',
  'openai.speech',
  'openai.transcriptions',
  'openai.translations',
  'openai.moderations',
  'gemini.predict',
]);

function wantsImage(req: MockRequest): boolean {
  const m = req.json?.generationConfig?.responseModalities;
  return Array.isArray(m) && m.includes('IMAGE');
}

function badRequest(ctx: ServeCtx, message: string, param: string | null = null): void {
  const reply = errorReply(ctx.req.provider, { status: 400, message, model: ctx.req.model }, requestId(ctx.req));
  const body = JSON.parse(reply.body);
  if (body.error) body.error.param = param;
  reply.body = JSON.stringify(body);
  return sendReply(ctx.res, reply);
}

/** OpenAI's images, audio and moderation endpoints, Gemini image output (generateContent and its SSE stream) and Imagen `:predict`. */
async function serveMedia(ctx: ServeCtx, b: ContentBehavior, t: Transport): Promise<void> {
  const { req, res } = ctx;
  const form = req.form;
  const fields: Record<string, any> = form?.fields ?? {};
  switch (req.endpoint) {
    case 'openai.images':
      if (typeof req.json?.prompt !== 'string') return badRequest(ctx, "Missing required parameter: 'prompt'.", 'prompt');
      if (req.json.stream === true) {
        openStream(ctx, 'text/event-stream');
        return writeFrames(res, imageStreamEvents('image_generation', imagesBody(req, ctx.baseUrl, req.json, 0), Number(req.json.partial_images ?? 0)), t, ctx.signal);
      }
      return sendJson(ctx, imagesBody(req, ctx.baseUrl, req.json, 0), undefined, t);
    case 'openai.image_edits': {
      if (!form) return badRequest(ctx, 'Invalid Content-Type header (application/json), expected multipart/form-data.');
      const images = form.files.filter((f) => f.field === 'image' || f.field === 'image[]');
      if (images.length === 0) return badRequest(ctx, "Missing required parameter: 'image'.", 'image');
      if (typeof fields.prompt !== 'string') return badRequest(ctx, "Missing required parameter: 'prompt'.", 'prompt');
      if (fields.stream === 'true') {
        openStream(ctx, 'text/event-stream');
        return writeFrames(res, imageStreamEvents('image_edit', imagesBody(req, ctx.baseUrl, fields, images.length), Number(fields.partial_images ?? 0)), t, ctx.signal);
      }
      return sendJson(ctx, imagesBody(req, ctx.baseUrl, fields, images.length), undefined, t);
    }
    case 'openai.speech': {
      const input = req.json?.input;
      if (typeof input !== 'string') return badRequest(ctx, "Missing required parameter: 'input'.", 'input');
      const chunks = speechChunks(input, b.chunks ?? 4);
      if (req.json?.stream_format === 'sse') {
        openStream(ctx, 'text/event-stream');
        return writeFrames(res, speechSse(input, chunks), t, ctx.signal);
      }
      res.writeHead(200, { 'content-type': speechContentType(req.json?.response_format), 'transfer-encoding': 'chunked', ...idHeaders(req) });
      res.flushHeaders();
      return writeFrames(res, chunks, t, ctx.signal);
    }
    case 'openai.transcriptions':
    case 'openai.translations': {
      if (!form) return badRequest(ctx, 'Invalid Content-Type header (application/json), expected multipart/form-data.');
      const file = form.files.find((f) => f.field === 'file');
      if (!file) return badRequest(ctx, "Missing required parameter: 'file'.", 'file');
      if (typeof fields.model !== 'string') return badRequest(ctx, "Missing required parameter: 'model'.", 'model');
      const text = b.type === 'text' && b.text !== undefined ? b.text : ctx.defaultText;
      if (req.endpoint === 'openai.transcriptions' && fields.stream === 'true') {
        if (!transcriptionStreams(fields.model)) return badRequest(ctx, `Streaming is not supported for the ${fields.model} model.`, 'stream');
        openStream(ctx, 'text/event-stream');
        return writeFrames(res, transcriptionSse(text, file.size, b.chunks ?? 3), t, ctx.signal);
      }
      const [contentType, body] = transcriptionBody(req.endpoint === 'openai.translations' ? 'translate' : 'transcribe', fields, text, file.size);
      return sendReply(res, { status: 200, headers: { 'content-type': contentType, ...idHeaders(req) }, body });
    }
    case 'openai.moderations':
      if (req.json?.input === undefined) return badRequest(ctx, "Missing required parameter: 'input'.", 'input');
      return sendJson(ctx, moderationBody(req, req.json), undefined, t);
    case 'gemini.predict':
      if (!Array.isArray(req.json?.instances)) return sendReply(res, errorReply('gemini', { status: 400, message: 'instances is required' }, requestId(req)));
      return sendJson(ctx, imagenBody(req.json), 'application/json; charset=UTF-8', t);
    case 'gemini.stream':
      openStream(ctx, 'text/event-stream');
      return writeFrames(res, geminiImageSse(req, req.json), t, ctx.signal);
    default:
      return sendJson(ctx, geminiImageBody(req, req.json), 'application/json; charset=UTF-8', t);
  }
}

const REPLAYED_HEADERS = ['content-type', 'request-id', 'x-request-id', 'retry-after'];

async function serveReplay(ctx: ServeCtx, b: Extract<Behavior, { type: 'replay' }>, t: Transport): Promise<void> {
  const list = loadRecording(b.file);
  const it = list[b.interaction ?? 0];
  if (!it) throw new Error(`${b.file} has no interaction ${b.interaction}`);
  const { status, headers, body, isStream } = it.response;
  const out: Record<string, string> = {};
  for (const name of REPLAYED_HEADERS) if (headers[name] !== undefined) out[name] = headers[name];
  ctx.res.writeHead(status, statusText(status), out);
  const frames: (string | Buffer)[] = b.chunkBytes
    ? byteChunks(body, b.chunkBytes)
    : isStream
      ? sseEvents(body)
      : [body];
  await writeFrames(ctx.res, frames, { ...t, intervalMs: b.chunkDelayMs ?? t.intervalMs }, ctx.signal);
}
