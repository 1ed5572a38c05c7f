import { createHash } from 'node:crypto';
import type { MockRequest } from '../types.js';
import { tokenCount } from '../reply.js';

/**
 * OpenAI's media endpoints (images, audio, moderations) and Gemini image output, as the mock answers them.
 * Numbers are deterministic so tests can compute costs: see the exported helpers.
 */

/** A 1x1 transparent PNG, the image every image reply carries. */
export const PNG_B64 = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=';

/** Image output tokens gpt-image-1 reports per image (OpenAI's published counts for 1024x1024 and 1024x1536). */
export function gptImageOutputTokens(quality: string | undefined, size: string | undefined): number {
  const square = !size || size === 'auto' || size === '1024x1024';
  const q = quality === 'low' ? 0 : quality === 'high' ? 2 : 1;
  return (square ? [272, 1056, 4160] : [408, 1584, 6240])[q]!;
}

/** Image input tokens the mock reports per input image of an edit. */
export const EDIT_IMAGE_TOKENS = 323;

/** Output tokens a Gemini image model reports per image (Gemini's 1290 per 1024px image). */
export const GEMINI_IMAGE_TOKENS = 1290;

/** Seconds of audio the mock reports for a file: one second per started 16,000 bytes (128 kbit/s). */
export function audioSeconds(bytes: number): number {
  return Math.max(1, Math.ceil(bytes / 16_000));
}

/** Audio tokens the mock reports for a file (gpt-4o-transcribe models): 10 per second. */
export function audioTokens(bytes: number): number {
  return audioSeconds(bytes) * 10;
}

function isGptImage(model: string): boolean {
  return model.startsWith('gpt-image');
}

/** An OpenAI images reply: `n` images (`b64_json`, or `url` for dall-e with response_format url), usage for gpt-image models. */
export function imagesBody(req: MockRequest, baseUrl: string, fields: Record<string, any>, inputImages: number): object {
  const model = String(fields.model ?? 'dall-e-2');
  const n = Number(fields.n ?? 1);
  const gpt = isGptImage(model);
  const url = !gpt && fields.response_format === 'url';
  const data = Array.from({ length: n }, (_, i) => {
    const entry: Record<string, string> = url ? { url: `${baseUrl}/files/image-${req.index}-${i}.png` } : { b64_json: PNG_B64 };
    if (model === 'dall-e-3') entry.revised_prompt = `A picture of ${String(fields.prompt ?? '')}`;
    return entry;
  });
  const body: Record<string, unknown> = { created: Math.floor(Date.now() / 1000), data };
  if (gpt) {
    const textTokens = tokenCount(String(fields.prompt ?? ''));
    const imageTokens = inputImages * EDIT_IMAGE_TOKENS;
    const out = n * gptImageOutputTokens(fields.quality, fields.size);
    body.background = fields.background ?? 'opaque';
    body.output_format = fields.output_format ?? 'png';
    body.quality = fields.quality ?? 'medium';
    body.size = fields.size ?? '1024x1024';
    body.usage = {
      input_tokens: textTokens + imageTokens,
      input_tokens_details: { image_tokens: imageTokens, text_tokens: textTokens },
      output_tokens: out,
      total_tokens: textTokens + imageTokens + out,
    };
  }
  return body;
}

const AUDIO_TYPES: Record<string, string> = {
  mp3: 'audio/mpeg',
  opus: 'audio/ogg',
  aac: 'audio/aac',
  flac: 'audio/flac',
  wav: 'audio/wav',
  pcm: 'audio/pcm',
};

export function speechContentType(format: string | undefined): string {
  return AUDIO_TYPES[format ?? 'mp3'] ?? 'audio/mpeg';
}

/** The audio bytes of a speech reply: `chunks` pieces of `chunkBytes` deterministic bytes. */
export function speechChunks(input: string, chunks = 4, chunkBytes = 16 * 1024): Buffer[] {
  const seed = createHash('sha256').update(input).digest();
  return Array.from({ length: chunks }, (_, i) => {
    const b = Buffer.alloc(chunkBytes);
    for (let j = 0; j < chunkBytes; j++) b[j] = seed[(i + j) % seed.length]! ^ (j & 0xff);
    if (i === 0) b.write('ID3', 0, 'latin1');
    return b;
  });
}

/** The SSE events of a speech reply with `stream_format: "sse"`. */
export function speechSse(input: string, chunks: Buffer[]): string[] {
  const frames = chunks.map((c) => `data: ${JSON.stringify({ type: 'speech.audio.delta', audio: c.toString('base64') })}\n\n`);
  const inTokens = tokenCount(input);
  const outTokens = chunks.length * 100;
  frames.push(`data: ${JSON.stringify({ type: 'speech.audio.done', usage: { input_tokens: inTokens, output_tokens: outTokens, total_tokens: inTokens + outTokens } })}\n\n`);
  return frames;
}

function timestamp(seconds: number, sep: ',' | '.'): string {
  const h = Math.floor(seconds / 3600);
  const m = Math.floor((seconds % 3600) / 60);
  const s = seconds % 60;
  return `${String(h).padStart(2, '0')}:${String(m).padStart(2, '0')}:${String(s).padStart(2, '0')}${sep}000`;
}

/** Whether a transcription model streams (`stream: true`): the gpt-4o transcribe family, not whisper. */
export function transcriptionStreams(model: string): boolean {
  return !model.startsWith('whisper');
}

function tokenUsage(text: string, fileBytes: number): object {
  const audio = audioTokens(fileBytes);
  const out = tokenCount(text);
  return { type: 'tokens', input_tokens: audio, input_token_details: { text_tokens: 0, audio_tokens: audio }, output_tokens: out, total_tokens: audio + out };
}

/** A transcription or translation reply in the requested `response_format`: [content type, body]. */
export function transcriptionBody(task: 'transcribe' | 'translate', fields: Record<string, any>, text: string, fileBytes: number): [string, string] {
  const model = String(fields.model ?? 'whisper-1');
  const format = String(fields.response_format ?? 'json');
  const seconds = audioSeconds(fileBytes);
  const usage = transcriptionStreams(model) ? tokenUsage(text, fileBytes) : { type: 'duration', seconds };
  switch (format) {
    case 'text':
      return ['text/plain; charset=utf-8', `${text}\n`];
    case 'srt':
      return ['text/plain; charset=utf-8', `1\n${timestamp(0, ',')} --> ${timestamp(seconds, ',')}\n${text}\n\n`];
    case 'vtt':
      return ['text/plain; charset=utf-8', `WEBVTT\n\n${timestamp(0, '.')} --> ${timestamp(seconds, '.')}\n${text}\n\n`];
    case 'verbose_json': {
      const grains = ([] as string[]).concat(fields['timestamp_granularities[]'] ?? []);
      const body: Record<string, unknown> = { task, language: 'english', duration: seconds, text };
      const words = text.split(/\s+/).filter(Boolean);
      if (grains.length === 0 || grains.includes('segment')) {
        body.segments = [{ id: 0, seek: 0, start: 0, end: seconds, text: ` ${text}`, tokens: words.map((_, i) => 50364 + i), temperature: 0, avg_logprob: -0.2, compression_ratio: 1.2, no_speech_prob: 0.01 }];
      }
      if (grains.includes('word')) body.words = words.map((word, i) => ({ word, start: (i * seconds) / words.length, end: ((i + 1) * seconds) / words.length }));
      body.usage = { type: 'duration', seconds };
      return ['application/json', JSON.stringify(body)];
    }
    default:
      return ['application/json', JSON.stringify({ text, usage })];
  }
}

/** The SSE transcription events of `stream: true`: text deltas, then `transcript.text.done` with usage. */
export function transcriptionSse(text: string, fileBytes: number, chunks = 3): string[] {
  const words = text.split(/(?<=\s)/);
  const per = Math.max(1, Math.ceil(words.length / chunks));
  const frames: string[] = [];
  for (let i = 0; i < words.length; i += per) {
    frames.push(`data: ${JSON.stringify({ type: 'transcript.text.delta', delta: words.slice(i, i + per).join('') })}\n\n`);
  }
  frames.push(`data: ${JSON.stringify({ type: 'transcript.text.done', text, usage: tokenUsage(text, fileBytes) })}\n\n`);
  return frames;
}

const CATEGORIES = ['harassment', 'harassment/threatening', 'hate', 'hate/threatening', 'illicit', 'illicit/violent', 'self-harm', 'self-harm/instructions', 'self-harm/intent', 'sexual', 'sexual/minors', 'violence', 'violence/graphic'];

/** Words that make the mock flag a text input for `violence`. */
const VIOLENT = /\b(kill|murder|attack)\b/i;

/** A moderation reply: one result per input (string, string array, or multimodal parts: one result). */
export function moderationBody(req: MockRequest, json: any): object {
  const input = json?.input;
  const items: { text: string; image: boolean }[] =
    typeof input === 'string'
      ? [{ text: input, image: false }]
      : Array.isArray(input) && input.every((x) => typeof x === 'string')
        ? input.map((t: string) => ({ text: t, image: false }))
        : [
            {
              text: (input as any[]).filter((p) => p?.type === 'text').map((p) => p.text).join(' '),
              image: (input as any[]).some((p) => p?.type === 'image_url'),
            },
          ];
  return {
    id: `modr-${req.index}`,
    model: json?.model ?? 'omni-moderation-latest',
    results: items.map(({ text, image }) => {
      const flagged = VIOLENT.test(text);
      const categories = Object.fromEntries(CATEGORIES.map((c) => [c, flagged && c === 'violence']));
      const scores = Object.fromEntries(CATEGORIES.map((c) => [c, flagged && c === 'violence' ? 0.91 : 0.0001]));
      const types = Object.fromEntries(CATEGORIES.map((c) => [c, image && ['violence', 'violence/graphic', 'self-harm', 'sexual'].includes(c) ? ['text', 'image'] : ['text']]));
      return { flagged, categories, category_scores: scores, category_applied_input_types: types };
    }),
  };
}

/** A Gemini generateContent reply with image output (text part + inlineData), with its usage. */
export function geminiImageBody(req: MockRequest, json: any): object {
  const parts = json?.contents?.flatMap((c: any) => c?.parts ?? []) ?? [];
  const prompt = parts.filter((p: any) => typeof p?.text === 'string').map((p: any) => p.text).join(' ');
  const inputImages = parts.filter((p: any) => p?.inlineData).length;
  const textTokens = tokenCount(prompt);
  const imageTokens = inputImages * 258;
  return {
    candidates: [
      {
        content: { role: 'model', parts: [{ text: 'Here is the image.' }, { inlineData: { mimeType: 'image/png', data: PNG_B64 } }] },
        finishReason: 'STOP',
        index: 0,
      },
    ],
    usageMetadata: {
      promptTokenCount: textTokens + imageTokens,
      candidatesTokenCount: GEMINI_IMAGE_TOKENS,
      totalTokenCount: textTokens + imageTokens + GEMINI_IMAGE_TOKENS,
      promptTokensDetails: [{ modality: 'TEXT', tokenCount: textTokens }, ...(imageTokens ? [{ modality: 'IMAGE', tokenCount: imageTokens }] : [])],
      candidatesTokensDetails: [{ modality: 'IMAGE', tokenCount: GEMINI_IMAGE_TOKENS }],
    },
    modelVersion: req.model ?? 'gemini-2.5-flash-image',
    responseId: `mock-${req.index}`,
  };
}

/**
 * The same reply as `streamGenerateContent?alt=sse` frames, as Google streams an image model: the text
 * part first (usage so far: the prompt), then the image whole in one `inlineData` part with the finish
 * reason and the complete `usageMetadata`; `data:` lines separated by CRLF pairs, like every Gemini stream.
 */
export function geminiImageSse(req: MockRequest, json: any): string[] {
  const whole = geminiImageBody(req, json) as any;
  const [text, image] = whole.candidates[0].content.parts;
  const usage = whole.usageMetadata;
  const envelope = { modelVersion: whole.modelVersion, responseId: whole.responseId };
  const frame = (body: object) => `data: ${JSON.stringify(body)}\r\n\r\n`;
  return [
    frame({
      candidates: [{ content: { role: 'model', parts: [text] }, index: 0 }],
      usageMetadata: { promptTokenCount: usage.promptTokenCount, totalTokenCount: usage.promptTokenCount, promptTokensDetails: usage.promptTokensDetails },
      ...envelope,
    }),
    frame({ candidates: [{ content: { role: 'model', parts: [image] }, finishReason: 'STOP', index: 0 }], usageMetadata: usage, ...envelope }),
  ];
}

/** An Imagen `:predict` reply: `sampleCount` images. */
export function imagenBody(json: any): object {
  const count = Number(json?.parameters?.sampleCount ?? 1);
  const mimeType = json?.parameters?.outputOptions?.mimeType ?? 'image/png';
  return { predictions: Array.from({ length: count }, () => ({ bytesBase64Encoded: PNG_B64, mimeType })) };
}

/** The SSE events of a streamed gpt-image-1 reply: `partial_images` partial events, then the completed one with usage. */
export function imageStreamEvents(kind: 'image_generation' | 'image_edit', body: any, partials: number): string[] {
  const frames: string[] = [];
  const common = { created_at: body.created, size: body.size, quality: body.quality, background: body.background, output_format: body.output_format };
  for (let i = 0; i < partials; i++) frames.push(`data: ${JSON.stringify({ type: `${kind}.partial_image`, b64_json: PNG_B64, partial_image_index: i, ...common })}\n\n`);
  frames.push(`data: ${JSON.stringify({ type: `${kind}.completed`, b64_json: PNG_B64, ...common, usage: body.usage })}\n\n`);
  return frames;
}
