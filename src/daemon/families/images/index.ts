import { formatSse } from '../../translate/sse.js';
import type { Family, FamilyTarget, Served, UploadedFile, UpstreamAsk } from '../family.js';
import { imageCost, type ImageTokenUsage } from '../pricing.js';
import { badField, field, formFor, JSON_TYPE, jsonAsk, num, requireEndpoint, tryJson } from '../util.js';
import { foldGeminiStream, geminiImageReply, geminiImageRequest, imageUsageObject, isImagen, type ImageAsk } from './gemini.js';
import { imagesReply } from './reply.js';

/**
 * POST /v1/images/generations and /v1/images/edits: OpenAI-format targets natively (streamed image events
 * relayed as they come), Gemini image models and Imagen translated (gemini.ts).
 *
 * A Gemini image model (generateContent) returns one image per call (Google documents no `candidateCount`
 * for image output; Imagen's `:predict` has `sampleCount` and takes `n` in one call): its most images per
 * call is 1, so for `n` above 1 the request is sent `n` times at once (`copies`) and their replies make one;
 * their tokens add up. Any call failing fails the attempt (the executor may then fail over as for one call).
 *
 * `stream: true` to a Gemini image model calls `streamGenerateContent?alt=sse` and answers OpenAI's image
 * events. Gemini sends each image whole (no partial renderings), so each image is one
 * `image_generation.completed` (or `image_edit.completed`) event and no `partial_image` events, whatever
 * `partial_images` asks: OpenAI documents that the final image may come before the partials asked for. The
 * upstream streams are read to their end before router answers, so a reply without an image still fails
 * over inside a combo.
 */

/** An image request read once. */
export interface ImageRequest extends ImageAsk {
  edit: boolean;
  model: string;
  /** What the usage row keeps of the body. */
  raw: Record<string, unknown>;
  /** The JSON body (generations) or the form (edits). */
  json?: Record<string, unknown>;
  form?: { fields: [string, string][]; files: UploadedFile[]; images: UploadedFile[]; mask?: UploadedFile };
}

/** Most images one call to a target returns: one for a Gemini image model's generateContent, all asked otherwise. */
export function maxImagesPerCall(target: FamilyTarget): number {
  return target.format === 'gemini' && !isImagen(target.model) ? 1 : Number.POSITIVE_INFINITY;
}

/** gpt-image-1's `usage`: input (text + image) and output image tokens. */
export function openAiImageTokens(usage: any): ImageTokenUsage | undefined {
  if (!usage || typeof usage !== 'object') return undefined;
  const input = num(usage.input_tokens);
  const output = num(usage.output_tokens);
  if (input === undefined && output === undefined) return undefined;
  const details = usage.input_tokens_details ?? {};
  const imageIn = num(details.image_tokens) ?? 0;
  const textIn = num(details.text_tokens) ?? Math.max(0, (input ?? 0) - imageIn);
  return { textIn, imageIn, imageOut: output ?? 0 };
}

/** Validates the common fields of an image request. */
function imageAsk(get: (name: string) => unknown): ImageAsk {
  const prompt = get('prompt');
  if (typeof prompt !== 'string' || prompt === '') throw badField("The 'prompt' field is required.", 'prompt');
  const nRaw = get('n');
  const n = nRaw === undefined || nRaw === null ? 1 : Number(nRaw);
  if (!Number.isInteger(n) || n < 1 || n > 10) throw badField("'n' must be an integer from 1 to 10.", 'n');
  const str = (name: string): string | undefined => {
    const v = get(name);
    if (v === undefined || v === null) return undefined;
    if (typeof v !== 'string') throw badField(`'${name}' must be a string.`, name);
    return v;
  };
  const responseFormat = str('response_format');
  if (responseFormat !== undefined && responseFormat !== 'url' && responseFormat !== 'b64_json') throw badField("'response_format' must be 'url' or 'b64_json'.", 'response_format');
  const stream = get('stream');
  if (stream !== undefined && stream !== null && stream !== true && stream !== false && stream !== 'true' && stream !== 'false') throw badField("'stream' must be a boolean.", 'stream');
  return {
    prompt,
    n,
    size: str('size'),
    quality: str('quality'),
    outputFormat: str('output_format'),
    responseFormat,
    background: str('background'),
    stream: stream === true || stream === 'true',
  };
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

/** The served reply: usage from image tokens, cost per picture or per token, the count in the row's notes. */
function served(ask: ImageRequest, body: string, count: number, tokens: ImageTokenUsage | undefined, contentType = JSON_TYPE): Served {
  return {
    body,
    contentType,
    streamed: contentType.startsWith('text/event-stream'),
    usage: tokens ? { inputTokens: tokens.textIn + tokens.imageIn, outputTokens: tokens.imageOut } : undefined,
    cost: (price) => imageCost(price, { n: count, size: ask.size, quality: ask.quality, tokens }),
    notes: { images: count, ...(ask.size ? { size: ask.size } : {}), ...(ask.quality ? { quality: ask.quality } : {}) },
  };
}

/** The replies of a Gemini image model called once per image (or streamed), made one OpenAI reply or event stream. */
function geminiEach(replies: string[], ask: ImageRequest, now: number): Served {
  const one: ImageAsk = { ...ask, n: 1, ...(ask.stream ? { responseFormat: 'b64_json' } : {}) };
  const decoded = replies.map((text) => geminiImageReply(ask.stream ? foldGeminiStream(text) : text, 'generate', one, now));
  const data = decoded.flatMap((r) => r.reply.data);
  let tokens: ImageTokenUsage | undefined;
  for (const r of decoded) {
    if (!r.tokens) continue;
    tokens = { textIn: (tokens?.textIn ?? 0) + r.tokens.textIn, imageIn: (tokens?.imageIn ?? 0) + r.tokens.imageIn, imageOut: (tokens?.imageOut ?? 0) + r.tokens.imageOut };
  }
  if (ask.stream) {
    // OpenAI's event framing (`event:` line, then the JSON with the same `type`), as its API sends it.
    const type = ask.edit ? 'image_edit.completed' : 'image_generation.completed';
    const events = decoded.flatMap((r) =>
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
            ...(r.tokens ? { usage: imageUsageObject(r.tokens) } : {}),
          }),
        }),
      ),
    );
    return served(ask, events.join(''), data.length, tokens, 'text/event-stream; charset=utf-8');
  }
  const reply: Record<string, unknown> = { ...decoded[0]!.reply, data };
  if (tokens) reply.usage = imageUsageObject(tokens);
  return served(ask, JSON.stringify(reply), data.length, tokens);
}

function imageFamily(edit: boolean): Family<ImageRequest> {
  return {
    name: edit ? 'image-edits' : 'images',
    route: edit
      ? { path: '/v1/images/edits', body: 'multipart', summary: 'Image edit (OpenAI shape, multipart: image or image[], optional mask); OpenAI-compatible providers and Gemini image models', reply: imagesReply(true) }
      : { path: '/v1/images/generations', body: 'json', summary: 'Image generation (OpenAI shape); OpenAI-compatible providers natively, Gemini image models and Imagen translated', reply: imagesReply(false) },
    read({ json, form }) {
      if (!form) {
        const model = json!.model;
        if (typeof model !== 'string' || model === '') throw badField("The 'model' field is required.", 'model');
        return { ...imageAsk((k) => json![k]), edit, model, raw: json!, json };
      }
      const model = field(form, 'model');
      if (!model) throw badField("The 'model' field is required.", 'model');
      const images = form.files.filter((f) => f.field === 'image' || f.field === 'image[]');
      if (images.length === 0) throw badField("The 'image' file is required.", 'image');
      const mask = form.files.find((f) => f.field === 'mask');
      const fields: Record<string, unknown> = Object.fromEntries(form.fields);
      return { ...imageAsk((k) => fields[k]), edit, model, raw: { ...fields, images: images.length, mask: mask !== undefined }, form: { ...form, images, mask } };
    },
    call: (ask) => ({ model: ask.model, raw: ask.raw, stream: false }),
    encode(ask, target): UpstreamAsk {
      const accept = ask.stream ? 'text/event-stream' : 'application/json';
      if (target.format === 'gemini') {
        requireEndpoint(target, 'images', edit ? 'image edit' : 'image generation');
        const { gemini: _kind, ...request } = geminiImageRequest(target, ask, ask.form?.images ?? [], ask.form?.mask);
        const copies = Math.ceil(ask.n / Math.min(ask.n, maxImagesPerCall(target)));
        return { ...request, accept, copies };
      }
      if (!edit) {
        requireEndpoint(target, 'images', 'image generation');
        return jsonAsk('images/generations', ask.json!, target.model, accept);
      }
      requireEndpoint(target, 'imageEdits', 'image edit');
      return { path: 'images/edits', ...formFor(ask.form!, target.model), accept };
    },
    relay: (ask, target, contentType) => ask.stream === true && target.format !== 'gemini' && contentType.startsWith('text/event-stream'),
    relayEnd(ask, _target, { tail }) {
      const tokens = openAiImageTokens(usageFromTail(tail));
      return {
        usage: tokens ? { inputTokens: tokens.textIn + tokens.imageIn, outputTokens: tokens.imageOut } : undefined,
        cost: (price) => imageCost(price, { n: ask.n, size: ask.size, quality: ask.quality, tokens }),
        notes: { images: ask.n },
      };
    },
    decode(replies, ask, target, ctx) {
      if (target.format === 'gemini') {
        if (!isImagen(target.model) && (ask.n > 1 || ask.stream)) return geminiEach(replies.map((r) => r.text), ask, ctx.now);
        const translated = geminiImageReply(replies[0]!.text, isImagen(target.model) ? 'predict' : 'generate', ask, ctx.now);
        return served(ask, JSON.stringify(translated.reply), translated.reply.data.length, translated.tokens);
      }
      const text = replies[0]!.text;
      const parsed = tryJson(text);
      return served(ask, text, Array.isArray(parsed?.data) ? parsed.data.length : ask.n, openAiImageTokens(parsed?.usage));
    },
    errorFormat: (target) => (target.format === 'gemini' ? 'gemini' : 'openai-chat'),
  };
}

export const images = imageFamily(false);
export const imageEdits = imageFamily(true);
