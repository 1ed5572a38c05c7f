import { CodecError } from '../../translate/errors.js';
import { geminiModelPath } from '../../translate/formats/gemini/index.js';
import { SseReader } from '../../translate/sse.js';
import { ReplyError, type FamilyTarget, type UploadedFile } from '../family.js';
import type { ImageTokenUsage } from '../pricing.js';
import { num, tryJson } from '../util.js';

/** What an OpenAI image request asks for, as the translation and pricing read it. */
export interface ImageAsk {
  prompt: string;
  n: number;
  size?: string;
  quality?: string;
  outputFormat?: string;
  responseFormat?: string;
  background?: string;
  /** `stream: true`: image events (gpt-image-1 relayed; Gemini image models through streamGenerateContent; Imagen refuses it). */
  stream?: boolean;
}

/** The aspect ratios Gemini image models and Imagen accept. */
const RATIOS: [string, number][] = [
  ['1:1', 1],
  ['2:3', 2 / 3],
  ['3:2', 3 / 2],
  ['3:4', 3 / 4],
  ['4:3', 4 / 3],
  ['4:5', 4 / 5],
  ['5:4', 5 / 4],
  ['9:16', 9 / 16],
  ['16:9', 16 / 9],
  ['21:9', 21 / 9],
];

/** OpenAI `size` (`WxH`) -> the nearest Gemini aspect ratio; undefined for `auto` or none. */
export function aspectRatio(size: string | undefined): string | undefined {
  const m = size ? /^(\d+)x(\d+)$/.exec(size) : null;
  if (!m) return undefined;
  const r = Number(m[1]) / Number(m[2]);
  let best = RATIOS[0]!;
  for (const c of RATIOS) if (Math.abs(Math.log(c[1] / r)) < Math.abs(Math.log(best[1] / r))) best = c;
  return best[0];
}

/** Imagen models are served by `:predict`; every other Gemini image model by `generateContent`. */
export function isImagen(model: string): boolean {
  return /(^|\/)imagen-/.test(model);
}

/**
 * An OpenAI image request translated for a Gemini target: Imagen through `models/{m}:predict`
 * (`instances[].prompt`, `parameters.sampleCount`/`aspectRatio`), other image models through
 * `generateContent` with `responseModalities: ["TEXT", "IMAGE"]` and the input images (edits) as
 * `inlineData` parts. generateContent returns one image per call: for `n` above 1 the attempt makes `n`
 * calls (the family's `copies`: images/index.ts).
 */
export function geminiImageRequest(
  target: FamilyTarget,
  ask: ImageAsk,
  images: readonly UploadedFile[],
  mask?: UploadedFile,
): { path: string; body: string; contentType: string; gemini: 'generate' | 'predict' } {
  const ratio = aspectRatio(ask.size);
  const model = geminiModelPath(target.model);
  if (isImagen(target.model)) {
    if (ask.stream) {
      throw new CodecError(400, `Imagen ('${target.publicModel}') does not stream images; ask without 'stream'.`, { code: 'endpoint_not_supported', param: 'stream' });
    }
    if (images.length > 0 || mask) throw new CodecError(400, `Imagen ('${target.publicModel}') does not edit images.`, { code: 'endpoint_not_supported', param: 'model' });
    const parameters: Record<string, unknown> = { sampleCount: ask.n };
    if (ratio) parameters.aspectRatio = ratio;
    if (ask.outputFormat) parameters.outputOptions = { mimeType: `image/${ask.outputFormat}` };
    return { path: `${model}:predict`, body: JSON.stringify({ instances: [{ prompt: ask.prompt }], parameters }), contentType: 'application/json', gemini: 'predict' };
  }
  const parts: unknown[] = images.map((f) => ({ inlineData: { mimeType: f.mimeType, data: f.data.toString('base64') } }));
  if (mask) {
    parts.push({ inlineData: { mimeType: mask.mimeType, data: mask.data.toString('base64') } });
    parts.push({ text: maskInstruction(images.length) });
  }
  parts.push({ text: ask.prompt });
  const generationConfig: Record<string, unknown> = { responseModalities: ['TEXT', 'IMAGE'] };
  if (ratio) generationConfig.imageConfig = { aspectRatio: ratio };
  // Streamed: Google's SSE form of the same call (`alt=sse`, as @google/genai's generateContentStream sends it).
  return {
    path: ask.stream ? `${model}:streamGenerateContent?alt=sse` : `${model}:generateContent`,
    body: JSON.stringify({ contents: [{ role: 'user', parts }], generationConfig }),
    contentType: 'application/json',
    gemini: 'generate',
  };
}

/**
 * The instruction that goes with a mask. generateContent has no mask parameter (Google documents mask-based
 * editing only for Imagen on Vertex AI, which router does not serve), so the mask travels as one more
 * image after the input images, sent as the client gave it (OpenAI's convention: a PNG whose fully
 * transparent pixels mark the area to edit; router has no PNG library to recolour it), and this text
 * tells the model how to read it. OpenAI applies the mask to the first image; so does the instruction.
 */
export function maskInstruction(imageCount: number): string {
  const which = imageCount > 1 ? 'the first image' : 'the image';
  return (
    `The last image is an edit mask for ${which} (same size). Its fully transparent pixels mark the only region ` +
    `you may change; every pixel where the mask is opaque must stay exactly as it is in ${which}. ` +
    'Apply the following edit inside that region only and return the whole edited image.'
  );
}

/** An image in OpenAI's reply shape: base64, or (when the client asked for `url`) a data URL. */
function imageEntry(data: string, mimeType: string, ask: ImageAsk, revised?: string): Record<string, string> {
  const entry: Record<string, string> = ask.responseFormat === 'url' ? { url: `data:${mimeType};base64,${data}` } : { b64_json: data };
  if (revised) entry.revised_prompt = revised;
  return entry;
}

/**
 * A Gemini reply translated to OpenAI's image reply (`created`, `data[]`, `output_format`, and `usage` from
 * `usageMetadata` when present). A reply with no image (a refusal, a safety block) is a 502 naming why,
 * so a combo can fail over.
 */
export function geminiImageReply(text: string | object, kind: 'generate' | 'predict', ask: ImageAsk, now: number): { reply: { created: number; data: Record<string, string>[]; [k: string]: unknown }; tokens?: ImageTokenUsage } {
  const parsed: any = typeof text === 'string' ? tryJson(text) : text;
  if (!parsed || typeof parsed !== 'object') throw new ReplyError('The Gemini image reply could not be read.');
  const data: Record<string, string>[] = [];
  let mime = 'image/png';
  let tokens: ImageTokenUsage | undefined;
  if (kind === 'predict') {
    for (const p of Array.isArray(parsed.predictions) ? parsed.predictions : []) {
      if (typeof p?.bytesBase64Encoded !== 'string') continue;
      mime = typeof p.mimeType === 'string' ? p.mimeType : mime;
      data.push(imageEntry(p.bytesBase64Encoded, mime, ask));
    }
  } else {
    const texts: string[] = [];
    for (const c of Array.isArray(parsed.candidates) ? parsed.candidates : []) {
      for (const part of Array.isArray(c?.content?.parts) ? c.content.parts : []) {
        const inline = part?.inlineData ?? part?.inline_data;
        if (typeof inline?.data === 'string') {
          mime = inline.mimeType ?? inline.mime_type ?? mime;
          data.push(imageEntry(inline.data, mime, ask));
        } else if (typeof part?.text === 'string' && !part.thought) texts.push(part.text);
      }
    }
    // The model's accompanying text (if any) is the closest thing to OpenAI's revised prompt.
    if (texts.length && data[0]) data[0].revised_prompt = texts.join('');
    const u = parsed.usageMetadata;
    if (u && typeof u === 'object') {
      const prompt = num(u.promptTokenCount) ?? 0;
      const imageIn = sumModality(u.promptTokensDetails, 'IMAGE');
      tokens = { textIn: Math.max(0, prompt - imageIn), imageIn, imageOut: num(u.candidatesTokenCount) ?? 0 };
    }
    if (data.length === 0) {
      const reason = parsed.promptFeedback?.blockReason ?? parsed.candidates?.[0]?.finishReason ?? 'no image in the reply';
      throw new ReplyError(`The Gemini model returned no image (${String(reason)}).`, 'empty');
    }
  }
  if (data.length === 0) throw new ReplyError('The Gemini model returned no image.', 'empty');
  const reply: { created: number; data: Record<string, string>[]; [k: string]: unknown } = { created: now, data };
  reply.output_format = mime.replace(/^image\//, '');
  if (ask.size) reply.size = ask.size;
  if (tokens) {
    reply.usage = imageUsageObject(tokens);
  }
  return { reply, tokens };
}

/**
 * A streamGenerateContent SSE body folded into one generateContent reply: every chunk's parts in order,
 * the last finish reason, prompt feedback and `usageMetadata` (Google sends the running totals, complete
 * on the last chunk). An image model sends its image whole in one chunk's `inlineData` part. An error
 * object in the stream fails the attempt like an upstream error.
 */
export function foldGeminiStream(text: string): object {
  // The whole body was read already (capped at the reply limit): an image event may be as large as that.
  const reader = new SseReader(Number.POSITIVE_INFINITY);
  const messages = [...reader.push(text), ...reader.end()];
  const parts: unknown[] = [];
  const folded: Record<string, any> = {};
  let finishReason: unknown;
  for (const msg of messages) {
    const chunk = tryJson(msg.data);
    if (!chunk || typeof chunk !== 'object') continue;
    if (chunk.error) throw new ReplyError(`The Gemini image stream failed: ${String(chunk.error.message ?? chunk.error.status ?? 'error')}`);
    const c = Array.isArray(chunk.candidates) ? chunk.candidates[0] : undefined;
    if (Array.isArray(c?.content?.parts)) parts.push(...c.content.parts);
    if (c?.finishReason) finishReason = c.finishReason;
    if (chunk.usageMetadata) folded.usageMetadata = chunk.usageMetadata;
    if (chunk.promptFeedback) folded.promptFeedback = chunk.promptFeedback;
  }
  if (messages.length === 0) throw new ReplyError('The Gemini image stream was empty.', 'empty');
  folded.candidates = [{ content: { role: 'model', parts }, ...(finishReason ? { finishReason } : {}), index: 0 }];
  return folded;
}

function sumModality(details: unknown, modality: string): number {
  if (!Array.isArray(details)) return 0;
  let n = 0;
  for (const d of details) if (d?.modality === modality) n += num(d.tokenCount) ?? 0;
  return n;
}

/** OpenAI's `usage` object of image tokens. */
export function imageUsageObject(tokens: ImageTokenUsage): Record<string, unknown> {
  return {
    input_tokens: tokens.textIn + tokens.imageIn,
    input_tokens_details: { text_tokens: tokens.textIn, image_tokens: tokens.imageIn },
    output_tokens: tokens.imageOut,
    total_tokens: tokens.textIn + tokens.imageIn + tokens.imageOut,
  };
}
