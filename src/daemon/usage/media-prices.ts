import type { Price } from './pricing.js';

/**
 * Shipped default prices of the media and rerank models, which providers do not bill per text token alone.
 * Part of the one price table (`DEFAULT_PRICES`), so `PUT /api/pricing/{provider}/{model}` overrides them
 * like any other. USD, standard tier, checked November 2026 from the published price lists:
 * - OpenAI  https://developers.openai.com/api/docs/pricing (image generation per image and image tokens;
 *           Whisper and TTS per minute / per million characters; gpt-4o-transcribe and gpt-4o-mini-tts
 *           per million text/audio tokens); moderation is free.
 * - Groq    https://groq.com/pricing (Whisper per hour of audio, at least 10 s billed per request; PlayAI
 *           speech per million characters).
 * - Gemini  https://ai.google.dev/gemini-api/docs/pricing (image output tokens of the image models,
 *           1290 tokens per 1024px image; Imagen per image).
 * - xAI     https://docs.x.ai/developers/pricing (per generated image).
 * - Cohere  https://cohere.com/pricing ($2.00 per 1,000 searches: one search unit is a query over up to 100
 *           documents; longer documents count as several).
 * Token rates (`input`, `output`, `imageInput`...) are per million tokens; `perImage` per image (by
 * `quality/size`, `*` matching any); `perAudioMinute` per minute of audio; `perMillionCharacters` per million
 * characters of speech input; `perSearchUnit` per Cohere search unit.
 */
const u = (rates: Omit<Price, 'input' | 'output'> & Partial<Pick<Price, 'input' | 'output'>>): Price => ({ input: 0, output: 0, ...rates });

export const MEDIA_PRICES: Readonly<Record<string, Readonly<Record<string, Price>>>> = {
  openai: {
    // gpt-image models report tokens (`usage`); the per-image prices serve a reply without usage.
    'gpt-image-1': u({
      input: 5,
      output: 40,
      imageInput: 10,
      imageOutput: 40,
      perImage: { 'low/1024x1024': 0.011, 'low/*': 0.016, 'high/1024x1024': 0.167, 'high/*': 0.25, '*/1024x1024': 0.042, '*/*': 0.063 },
    }),
    'gpt-image-1.5': u({ input: 5, output: 32, imageInput: 8, imageOutput: 32 }),
    'gpt-image-1-mini': u({
      input: 2,
      output: 8,
      imageInput: 2.5,
      imageOutput: 8,
      perImage: { 'low/1024x1024': 0.005, 'low/*': 0.006, 'high/1024x1024': 0.036, 'high/*': 0.052, '*/1024x1024': 0.011, '*/*': 0.015 },
    }),
    'dall-e-3': u({ perImage: { 'standard/1024x1024': 0.04, 'standard/*': 0.08, 'hd/1024x1024': 0.08, 'hd/*': 0.12 } }),
    'dall-e-2': u({ perImage: { '*/256x256': 0.016, '*/512x512': 0.018, '*/*': 0.02 } }),
    'whisper-1': u({ perAudioMinute: 0.006 }),
    'gpt-4o-transcribe': u({ input: 2.5, output: 10, audioInput: 6, perAudioMinute: 0.006 }),
    'gpt-4o-mini-transcribe': u({ input: 1.25, output: 5, audioInput: 3, perAudioMinute: 0.003 }),
    'tts-1': u({ perMillionCharacters: 15 }),
    'tts-1-hd': u({ perMillionCharacters: 30 }),
    // Priced by OpenAI per token (~$0.015 a minute). Speech replies carry no token counts, so the published
    // per-character estimate is used.
    'gpt-4o-mini-tts': u({ input: 0.6, audioOutput: 12, perMillionCharacters: 12.5 }),
  },
  groq: {
    'whisper-large-v3': u({ perAudioMinute: 0.111 / 60, minAudioSeconds: 10 }),
    'whisper-large-v3-turbo': u({ perAudioMinute: 0.04 / 60, minAudioSeconds: 10 }),
    'distil-whisper-large-v3-en': u({ perAudioMinute: 0.02 / 60, minAudioSeconds: 10 }),
    'playai-tts': u({ perMillionCharacters: 50 }),
    'playai-tts-arabic': u({ perMillionCharacters: 50 }),
  },
  gemini: {
    // Image models: input as the text model, image output per token.
    'gemini-2.5-flash-image': u({ input: 0.3, output: 30, imageInput: 0.3, imageOutput: 30 }),
    'gemini-2.5-flash-image-preview': u({ input: 0.3, output: 30, imageInput: 0.3, imageOutput: 30 }),
    'gemini-3-pro-image-preview': u({ input: 2, output: 120, imageInput: 2, imageOutput: 120 }),
    'imagen-4.0-generate-001': u({ perImage: 0.04 }),
    'imagen-4.0-ultra-generate-001': u({ perImage: 0.06 }),
    'imagen-4.0-fast-generate-001': u({ perImage: 0.02 }),
    'imagen-3.0-generate-002': u({ perImage: 0.03 }),
    // Imagen's editing model (mask inpainting, docs/images.md).
    'imagen-3.0-capability-001': u({ perImage: 0.03 }),
  },
  xai: {
    'grok-2-image': u({ perImage: 0.07 }),
    'grok-2-image-1212': u({ perImage: 0.07 }),
  },
  cohere: {
    'rerank-v4.0-pro': u({ perSearchUnit: 0.002 }),
    'rerank-v4.0-fast': u({ perSearchUnit: 0.002 }),
    'rerank-v3.5': u({ perSearchUnit: 0.002 }),
    'rerank-english-v3.0': u({ perSearchUnit: 0.002 }),
    'rerank-multilingual-v3.0': u({ perSearchUnit: 0.002 }),
  },
};
