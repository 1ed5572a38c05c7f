/**
 * Prices of the media endpoints (images, speech, transcription), which providers do not bill per text
 * token alone. USD, standard tier, checked November 2026 from the published price lists:
 * - OpenAI  https://developers.openai.com/api/docs/pricing (image generation per image and image tokens;
 *           Whisper and TTS per minute / per million characters; gpt-4o-transcribe and gpt-4o-mini-tts
 *           per million text/audio tokens); moderation is free.
 * - Groq    https://groq.com/pricing (Whisper per hour of audio, at least 10 s billed per request; PlayAI
 *           speech per million characters).
 * - Gemini  https://ai.google.dev/gemini-api/docs/pricing (image output tokens of the image models,
 *           1290 tokens per 1024px image; Imagen per image).
 * - xAI     https://docs.x.ai/developers/pricing (per generated image).
 * A model not listed costs 0 (its usage row still has its counts): add a price here or report it.
 */

/** Per image, by `quality/size` (`*` matches any), USD. */
type ImagePrices = Record<string, number>;

/** Token rates per million: text input, image input, image output (gpt-image-1 reports these in `usage`). */
interface ImageTokenRates {
  textIn: number;
  imageIn: number;
  imageOut: number;
}

const IMAGE_TOKEN_RATES: Record<string, ImageTokenRates> = {
  'openai/gpt-image-1': { textIn: 5, imageIn: 10, imageOut: 40 },
  'openai/gpt-image-1.5': { textIn: 5, imageIn: 8, imageOut: 32 },
  'openai/gpt-image-1-mini': { textIn: 2, imageIn: 2.5, imageOut: 8 },
  // Gemini image models: input as the text model, image output per token.
  'gemini/gemini-2.5-flash-image': { textIn: 0.3, imageIn: 0.3, imageOut: 30 },
  'gemini/gemini-2.5-flash-image-preview': { textIn: 0.3, imageIn: 0.3, imageOut: 30 },
  'gemini/gemini-3-pro-image-preview': { textIn: 2, imageIn: 2, imageOut: 120 },
};

const IMAGE_PRICES: Record<string, ImagePrices> = {
  'openai/dall-e-3': { 'standard/1024x1024': 0.04, 'standard/*': 0.08, 'hd/1024x1024': 0.08, 'hd/*': 0.12 },
  'openai/dall-e-2': { '*/256x256': 0.016, '*/512x512': 0.018, '*/*': 0.02 },
  // Used when gpt-image-1 reports no usage (per image by quality and size; `auto` priced as medium).
  'openai/gpt-image-1': { 'low/1024x1024': 0.011, 'low/*': 0.016, 'high/1024x1024': 0.167, 'high/*': 0.25, '*/1024x1024': 0.042, '*/*': 0.063 },
  'openai/gpt-image-1-mini': { 'low/1024x1024': 0.005, 'low/*': 0.006, 'high/1024x1024': 0.036, 'high/*': 0.052, '*/1024x1024': 0.011, '*/*': 0.015 },
  'xai/grok-2-image': { '*/*': 0.07 },
  'xai/grok-2-image-1212': { '*/*': 0.07 },
  'gemini/imagen-4.0-generate-001': { '*/*': 0.04 },
  'gemini/imagen-4.0-ultra-generate-001': { '*/*': 0.06 },
  'gemini/imagen-4.0-fast-generate-001': { '*/*': 0.02 },
  'gemini/imagen-3.0-generate-002': { '*/*': 0.03 },
};

/** Transcription and translation per second of audio, with a minimum billed duration (Groq: 10 s). */
const AUDIO_SECOND_PRICES: Record<string, { perSecond: number; minSeconds?: number }> = {
  'openai/whisper-1': { perSecond: 0.006 / 60 },
  'openai/gpt-4o-transcribe': { perSecond: 0.006 / 60 },
  'openai/gpt-4o-mini-transcribe': { perSecond: 0.003 / 60 },
  'groq/whisper-large-v3': { perSecond: 0.111 / 3600, minSeconds: 10 },
  'groq/whisper-large-v3-turbo': { perSecond: 0.04 / 3600, minSeconds: 10 },
  'groq/distil-whisper-large-v3-en': { perSecond: 0.02 / 3600, minSeconds: 10 },
};

/** Token rates per million for the audio models that report tokens: text in, audio in, text out, audio out. */
const AUDIO_TOKEN_RATES: Record<string, { textIn: number; audioIn: number; textOut: number; audioOut: number }> = {
  'openai/gpt-4o-transcribe': { textIn: 2.5, audioIn: 6, textOut: 10, audioOut: 0 },
  'openai/gpt-4o-mini-transcribe': { textIn: 1.25, audioIn: 3, textOut: 5, audioOut: 0 },
  'openai/gpt-4o-mini-tts': { textIn: 0.6, audioIn: 0, textOut: 0, audioOut: 12 },
};

/** Speech per million input characters. */
const SPEECH_CHAR_PRICES: Record<string, number> = {
  'openai/tts-1': 15,
  'openai/tts-1-hd': 30,
  // Priced by OpenAI per token; ~$0.015 a minute. Without token counts (speech replies carry none) the
  // published per-character estimate is used.
  'openai/gpt-4o-mini-tts': 12.5,
  'groq/playai-tts': 50,
  'groq/playai-tts-arabic': 50,
};

const PER = 1_000_000;

function key(provider: string, model: string): string {
  return `${provider}/${model}`;
}

/** Token counts an image reply reports (gpt-image-1 `usage`, Gemini `usageMetadata`). */
export interface ImageTokenUsage {
  textIn: number;
  imageIn: number;
  imageOut: number;
}

/**
 * Cost of an image reply: by its reported tokens when the model has token rates, else per image by
 * quality and size (n images); 0 for an unknown model.
 */
export function imageCost(provider: string, model: string, opts: { n: number; size?: string; quality?: string; tokens?: ImageTokenUsage }): number {
  const rates = IMAGE_TOKEN_RATES[key(provider, model)];
  if (rates && opts.tokens) {
    const t = opts.tokens;
    return (t.textIn * rates.textIn + t.imageIn * rates.imageIn + t.imageOut * rates.imageOut) / PER;
  }
  const table = IMAGE_PRICES[key(provider, model)];
  if (!table) return 0;
  const q = opts.quality ?? 'standard';
  const s = opts.size ?? '1024x1024';
  const each = table[`${q}/${s}`] ?? table[`${q}/*`] ?? table[`*/${s}`] ?? table['*/*'] ?? 0;
  return each * Math.max(1, opts.n);
}

/** Cost of a transcription or translation: by reported tokens where priced so, else by seconds of audio. */
export function transcriptionCost(
  provider: string,
  model: string,
  opts: { seconds?: number; tokens?: { textIn: number; audioIn: number; textOut: number } },
): number {
  const rates = AUDIO_TOKEN_RATES[key(provider, model)];
  if (rates && opts.tokens) return (opts.tokens.textIn * rates.textIn + opts.tokens.audioIn * rates.audioIn + opts.tokens.textOut * rates.textOut) / PER;
  const price = AUDIO_SECOND_PRICES[key(provider, model)];
  if (!price || opts.seconds === undefined) return 0;
  return Math.max(opts.seconds, price.minSeconds ?? 0) * price.perSecond;
}

/** Cost of a speech reply: by the characters of its input text. */
export function speechCost(provider: string, model: string, characters: number): number {
  const rate = SPEECH_CHAR_PRICES[key(provider, model)];
  return rate ? (characters * rate) / PER : 0;
}
