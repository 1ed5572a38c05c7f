import { FastResponse } from 'srvx';
import { badRequest } from '../../http/errors.js';
import type { RouteContext } from '../../http/routes.js';
import { formatSse } from '../../translate/sse.js';
import { execute, finishOutcome } from '../execute.js';
import type { Outcome } from '../outcome.js';
import { joinUrl, type Target } from '../../providers/target.js';
import type { AttemptLimits } from '../attempt-guard.js';
import { failReply, mediaRequest, num, openUpstream, passThrough, readWhole, replyHeaders, requireEndpoint, tryJson, upstreamContentType, type MediaRequest, type OpenReply } from './common.js';
import { foldGeminiStream, geminiImageRequest, geminiImageReply, type ImageAsk } from './gemini-images.js';
import { encodeMultipart, field, type MultipartBody } from './multipart.js';
import { imageCost, type ImageTokenUsage } from './pricing.js';

/** One prepared image attempt: where it goes, its body, and how its reply is read. */
interface ImagePrepared {
  url: string;
  body: string | Uint8Array;
  contentType: string;
  /** Set for a Gemini target: the reply is translated from generateContent / :predict. */
  gemini?: 'generate' | 'predict';
  format: string;
}

/** gpt-image-1's `usage`: input (text + image) and output image tokens. */
function openAiImageTokens(usage: any): ImageTokenUsage | undefined {
  if (!usage || typeof usage !== 'object') return undefined;
  const input = num(usage.input_tokens);
  const output = num(usage.output_tokens);
  if (input === undefined && output === undefined) return undefined;
  const details = usage.input_tokens_details ?? {};
  const imageIn = num(details.image_tokens) ?? 0;
  const textIn = num(details.text_tokens) ?? Math.max(0, (input ?? 0) - imageIn);
  return { textIn, imageIn, imageOut: output ?? 0 };
}

/** Validates the common fields of an image request; returns what the translation and pricing need. */
function imageAsk(get: (name: string) => unknown, requirePrompt: boolean): ImageAsk {
  const prompt = get('prompt');
  if (requirePrompt && (typeof prompt !== 'string' || prompt === '')) throw badRequest("The 'prompt' field is required.", 'prompt');
  const nRaw = get('n');
  const n = nRaw === undefined || nRaw === null ? 1 : Number(nRaw);
  if (!Number.isInteger(n) || n < 1 || n > 10) throw badRequest("'n' must be an integer from 1 to 10.", 'n');
  const str = (name: string): string | undefined => {
    const v = get(name);
    if (v === undefined || v === null) return undefined;
    if (typeof v !== 'string') throw badRequest(`'${name}' must be a string.`, name);
    return v;
  };
  const responseFormat = str('response_format');
  if (responseFormat !== undefined && responseFormat !== 'url' && responseFormat !== 'b64_json') throw badRequest("'response_format' must be 'url' or 'b64_json'.", 'response_format');
  const stream = get('stream');
  if (stream !== undefined && stream !== null && stream !== true && stream !== false && stream !== 'true' && stream !== 'false') throw badRequest("'stream' must be a boolean.", 'stream');
  return {
    prompt: typeof prompt === 'string' ? prompt : '',
    n,
    size: str('size'),
    quality: str('quality'),
    outputFormat: str('output_format'),
    responseFormat,
    background: str('background'),
    stream: stream === true || stream === 'true',
  };
}

/** Records an image reply's usage row with its cost and answers the client in OpenAI's shape. */
function answerImages(
  m: MediaRequest,
  target: Target,
  ask: ImageAsk,
  outcome: Outcome,
  body: string,
  count: number,
  tokens: ImageTokenUsage | undefined,
  upstreamMs: number,
  contentType = 'application/json; charset=utf-8',
): Response {
  const streamed = contentType.startsWith('text/event-stream');
  outcome.status = 200;
  if (streamed) outcome.streamed = true;
  outcome.upstreamMs = upstreamMs;
  outcome.usage = tokens ? { inputTokens: tokens.textIn + tokens.imageIn, outputTokens: tokens.imageOut } : undefined;
  outcome.costUsd = imageCost(m.services.usage.pricing.lookup(target.provider.id, target.model), { n: count, size: ask.size, quality: ask.quality, tokens });
  outcome.notes = { ...outcome.notes, images: count, ...(ask.size ? { size: ask.size } : {}), ...(ask.quality ? { quality: ask.quality } : {}) };
  finishOutcome(m.services, outcome, outcome.usage);
  const headers = replyHeaders(m, contentType, upstreamMs);
  if (streamed) headers['cache-control'] = 'no-cache';
  return new FastResponse(body, { status: 200, headers });
}

/** Reads an image reply (OpenAI's, or a Gemini one translated) and answers it. */
async function finishImages(m: MediaRequest, target: Target, prepared: ImagePrepared, ask: ImageAsk, outcome: Outcome, text: string, upstreamMs: number): Promise<Response> {
  if (prepared.gemini) {
    const translated = geminiImageReply(text, prepared.gemini, ask);
    return answerImages(m, target, ask, outcome, JSON.stringify(translated.reply), translated.reply.data.length, translated.tokens, upstreamMs);
  }
  const parsed = tryJson(text);
  const count = Array.isArray(parsed?.data) ? parsed.data.length : ask.n;
  return answerImages(m, target, ask, outcome, text, count, openAiImageTokens(parsed?.usage), upstreamMs);
}

/** OpenAI's `usage` object of image tokens. */
function usageObject(tokens: ImageTokenUsage): Record<string, unknown> {
  return {
    input_tokens: tokens.textIn + tokens.imageIn,
    input_tokens_details: { text_tokens: tokens.textIn, image_tokens: tokens.imageIn },
    output_tokens: tokens.imageOut,
    total_tokens: tokens.textIn + tokens.imageIn + tokens.imageOut,
  };
}

/**
 * Images from a Gemini image model (generateContent). It returns one image per call (Google documents no
 * `candidateCount` for image output; Imagen's `:predict` has `sampleCount` and takes `n` in one call), so
 * for `n` above 1 the attempt makes `n` calls at once and answers one reply; their tokens add up. Any call
 * failing fails the attempt (the executor may then fail over as for one call).
 *
 * `stream: true` calls `streamGenerateContent?alt=sse` and answers OpenAI's image events. Gemini sends
 * each image whole (no partial renderings), so each image is one `image_generation.completed` (or
 * `image_edit.completed`) event and no `partial_image` events, whatever `partial_images` asks: OpenAI
 * documents that the final image may come before the partials asked for. The upstream streams are read to
 * their end before router answers, so a reply without an image still fails over inside a combo.
 */
async function attemptGeminiEach(m: MediaRequest, target: Target, prepared: ImagePrepared, ask: ImageAsk, outcome: Outcome, limits: AttemptLimits): Promise<Response> {
  const one: ImageAsk = { ...ask, n: 1, ...(ask.stream ? { responseFormat: 'b64_json' } : {}) };
  const accept = ask.stream ? 'text/event-stream' : 'application/json';
  const replies = await Promise.all(
    Array.from({ length: ask.n }, async () => {
      const open = await openUpstream(target, prepared.url, prepared.body, prepared.contentType, limits, m.sink, accept);
      const { bytes, upstreamMs } = await readWhole(open);
      const text = bytes.toString('utf8');
      return { ...geminiImageReply(ask.stream ? foldGeminiStream(text) : text, 'generate', one), upstreamMs };
    }),
  );
  const first = replies[0]!;
  const data = replies.flatMap((r) => r.reply.data);
  let tokens: ImageTokenUsage | undefined;
  for (const r of replies) {
    if (!r.tokens) continue;
    tokens = { textIn: (tokens?.textIn ?? 0) + r.tokens.textIn, imageIn: (tokens?.imageIn ?? 0) + r.tokens.imageIn, imageOut: (tokens?.imageOut ?? 0) + r.tokens.imageOut };
  }
  const upstreamMs = Math.max(...replies.map((r) => r.upstreamMs));
  if (ask.stream) {
    // OpenAI's event framing (`event:` line, then the JSON with the same `type`), as its API sends it.
    const type = m.exec.call.endpoint === '/v1/images/edits' ? 'image_edit.completed' : 'image_generation.completed';
    const events = replies.flatMap((r) =>
      r.reply.data.map((d) =>
        formatSse({
          event: type,
          data: JSON.stringify({
            type,
            b64_json: d.b64_json,
            created_at: r.reply.created,
            size: ask.size ?? 'auto',
            quality: ask.quality ?? 'auto',
            background: ask.background ?? 'auto',
            output_format: r.reply.output_format,
            ...(r.tokens ? { usage: usageObject(r.tokens) } : {}),
          }),
        }),
      ),
    );
    return answerImages(m, target, ask, outcome, events.join(''), data.length, tokens, upstreamMs, 'text/event-stream; charset=utf-8');
  }
  const reply: Record<string, unknown> = { ...first.reply, data };
  if (tokens) reply.usage = usageObject(tokens);
  return answerImages(m, target, ask, outcome, JSON.stringify(reply), data.length, tokens, upstreamMs);
}

/**
 * The `usage` object of the last event in a stream's tail. An image event carries the whole image before
 * its usage, so the tail holds only the end of that line: the object is cut out by its braces.
 */
export function usageFromTail(tail: string): unknown {
  const at = tail.lastIndexOf('"usage"');
  if (at < 0) return undefined;
  const open = tail.indexOf('{', at);
  if (open < 0) return undefined;
  let depth = 0;
  for (let i = open; i < tail.length; i++) {
    if (tail[i] === '{') depth++;
    else if (tail[i] === '}' && --depth === 0) return tryJson(tail.slice(open, i + 1));
  }
  return undefined;
}

/** A streamed image reply (`stream: true`, gpt-image-1): the partial and completed events passed through as they come. */
function streamImages(m: MediaRequest, target: Target, ask: ImageAsk, outcome: Outcome, open: OpenReply, contentType: string): Response {
  const upstreamMs = performance.now() - open.tSend;
  const body = passThrough(open, (error, tail) => {
    const tokens = openAiImageTokens(usageFromTail(tail));
    outcome.status = 200;
    outcome.streamed = true;
    outcome.upstreamMs = upstreamMs;
    outcome.error = error;
    outcome.usage = tokens ? { inputTokens: tokens.textIn + tokens.imageIn, outputTokens: tokens.imageOut } : undefined;
    outcome.costUsd = imageCost(m.services.usage.pricing.lookup(target.provider.id, target.model), { n: ask.n, size: ask.size, quality: ask.quality, tokens });
    outcome.notes = { ...outcome.notes, images: ask.n };
    finishOutcome(m.services, outcome, outcome.usage);
  });
  const headers = replyHeaders(m, contentType, upstreamMs);
  headers['cache-control'] = 'no-cache';
  headers['x-accel-buffering'] = 'no';
  return new FastResponse(body as unknown as ReadableStream, { status: 200, headers });
}

async function attemptImages(m: MediaRequest, target: Target, prepared: ImagePrepared, ask: ImageAsk, outcome: Outcome, limits: AttemptLimits): Promise<Response> {
  if (prepared.gemini === 'generate' && (ask.n > 1 || ask.stream)) return attemptGeminiEach(m, target, prepared, ask, outcome, limits);
  const open = await openUpstream(target, prepared.url, prepared.body, prepared.contentType, limits, m.sink, ask.stream ? 'text/event-stream' : 'application/json');
  const contentType = upstreamContentType(open, 'application/json');
  if (ask.stream && contentType.startsWith('text/event-stream')) return streamImages(m, target, ask, outcome, open, contentType);
  const { bytes, upstreamMs } = await readWhole(open);
  return finishImages(m, target, prepared, ask, outcome, bytes.toString('utf8'), upstreamMs);
}

/** POST /v1/images/generations: OpenAI-format targets natively, Gemini image models translated. */
export async function runImageGeneration(ctx: RouteContext, raw: Record<string, unknown>): Promise<Response> {
  if (typeof raw.model !== 'string' || raw.model === '') throw badRequest("The 'model' field is required.", 'model');
  const ask = imageAsk((k) => raw[k], true);
  const m = mediaRequest(ctx, '/v1/images/generations', raw.model, raw);
  return execute(m.exec, {
    prepare(target): ImagePrepared {
      requireEndpoint(target, 'images', 'image generation');
      if (target.format === 'gemini') return { ...geminiImageRequest(target, ask, []), format: 'gemini' };

      return { url: joinUrl(target.baseUrl, 'images/generations'), body: JSON.stringify({ ...raw, model: target.model }), contentType: 'application/json', format: target.format };
    },
    attempt: (target, prepared, outcome, limits) => attemptImages(m, target, prepared, ask, outcome, limits),
    fail: (last, prepared) => failReply(m, last, prepared.format),
  });
}

/** POST /v1/images/edits (multipart: `image` or `image[]`, optional `mask`): OpenAI-format targets natively, Gemini translated. */
export async function runImageEdit(ctx: RouteContext, form: MultipartBody): Promise<Response> {
  const model = field(form, 'model');
  if (!model) throw badRequest("The 'model' field is required.", 'model');
  const images = form.files.filter((f) => f.field === 'image' || f.field === 'image[]');
  if (images.length === 0) throw badRequest("The 'image' file is required.", 'image');
  const mask = form.files.find((f) => f.field === 'mask');
  const fields: Record<string, unknown> = Object.fromEntries(form.fields);
  const ask = imageAsk((k) => fields[k], true);
  const m = mediaRequest(ctx, '/v1/images/edits', model, { ...fields, images: images.length, mask: mask !== undefined });
  return execute(m.exec, {
    prepare(target): ImagePrepared {
      requireEndpoint(target, target.format === 'gemini' ? 'images' : 'imageEdits', 'image edit');
      if (target.format === 'gemini') return { ...geminiImageRequest(target, ask, images, mask), format: 'gemini' };
      const out = form.fields.map(([k, v]): [string, string] => [k, k === 'model' ? target.model : v]);
      const encoded = encodeMultipart(out, form.files);
      return { url: joinUrl(target.baseUrl, 'images/edits'), body: encoded.body, contentType: encoded.contentType, format: target.format };
    },
    attempt: (target, prepared, outcome, limits) => attemptImages(m, target, prepared, ask, outcome, limits),
    fail: (last, prepared) => failReply(m, last, prepared.format),
  });
}
