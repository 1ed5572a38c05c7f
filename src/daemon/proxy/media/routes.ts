import { bodyLimitFor } from '../../http/app.js';
import { readJsonBody } from '../../http/body.js';
import { badRequest } from '../../http/errors.js';
import { route, type RouteContext, type RouteDef } from '../../http/routes.js';
import { AUDIO_FILE_BYTES, runSpeech, runTranscription } from './audio.js';
import { runImageEdit, runImageGeneration } from './images.js';
import { runModeration } from './moderation.js';
import { readMultipart } from './multipart.js';

/** Multipart routes take uploads; honoured only with a credential header (http/request-guard.ts). */
const MULTIPART = ['multipart/form-data'] as const;

/** Room for the fields and boundaries of an audio upload beside its 25 MiB file. */
const AUDIO_BODY_BYTES = AUDIO_FILE_BYTES + 1024 * 1024;

async function readObject(ctx: RouteContext, def: RouteDef): Promise<Record<string, unknown>> {
  const raw = await readJsonBody(ctx.event, bodyLimitFor(def, ctx.services));
  if (!raw || typeof raw !== 'object' || Array.isArray(raw)) throw badRequest('Request body must be a JSON object.');
  ctx.event.context.clientBody = raw;
  return raw as Record<string, unknown>;
}

const imageGenerations: RouteDef = route({
  method: 'POST',
  path: '/v1/images/generations',
  tier: 'client',
  tag: 'proxy',
  summary: 'Image generation (OpenAI shape); OpenAI-compatible providers natively, Gemini image models and Imagen translated',
  rawBody: true,
  handler: async (ctx) => runImageGeneration(ctx, await readObject(ctx, imageGenerations)),
});

const imageEdits: RouteDef = route({
  method: 'POST',
  path: '/v1/images/edits',
  tier: 'client',
  tag: 'proxy',
  summary: 'Image edit (OpenAI shape, multipart: image or image[], optional mask); OpenAI-compatible providers and Gemini image models',
  rawBody: true,
  bodyTypes: MULTIPART,
  handler: async (ctx) => {
    const limit = bodyLimitFor(imageEdits, ctx.services);
    return runImageEdit(ctx, await readMultipart(ctx.event, { fileBytes: limit, totalBytes: limit }));
  },
});

const speech: RouteDef = route({
  method: 'POST',
  path: '/v1/audio/speech',
  tier: 'client',
  tag: 'proxy',
  summary: 'Text to speech (OpenAI shape); the audio, or SSE with stream_format "sse", is streamed as it arrives',
  rawBody: true,
  handler: async (ctx) => runSpeech(ctx, await readObject(ctx, speech)),
});

function audioUpload(kind: 'transcriptions' | 'translations', summary: string): RouteDef {
  const def: RouteDef = route({
    method: 'POST',
    path: `/v1/audio/${kind}`,
    tier: 'client',
    tag: 'proxy',
    summary,
    rawBody: true,
    bodyTypes: MULTIPART,
    bodyLimit: AUDIO_BODY_BYTES,
    handler: async (ctx) => runTranscription(ctx, await readMultipart(ctx.event, { fileBytes: AUDIO_FILE_BYTES, totalBytes: AUDIO_BODY_BYTES, files: 1 }), kind),
  });
  return def;
}

const moderations: RouteDef = route({
  method: 'POST',
  path: '/v1/moderations',
  tier: 'client',
  tag: 'proxy',
  summary: 'Moderation (OpenAI shape, text and image inputs); model defaults to openai/omni-moderation-latest',
  rawBody: true,
  handler: async (ctx) => runModeration(ctx, await readObject(ctx, moderations)),
});

/** The media proxy routes (client tier): images, audio, moderation. */
export const mediaRoutes: RouteDef[] = [
  imageGenerations,
  imageEdits,
  speech,
  audioUpload('transcriptions', 'Speech to text (OpenAI shape, multipart file up to 25 MiB); json/text/srt/vtt/verbose_json; stream: true for SSE transcript events'),
  audioUpload('translations', 'Speech translated to English text (OpenAI shape, multipart file up to 25 MiB)'),
  moderations,
];
