import type { Price } from '../usage/pricing.js';

/**
 * Costs of the media endpoints (images, speech, transcription) from the one price table
 * (`services.usage.pricing.lookup`: shipped defaults in usage/media-prices.ts, the user's
 * `PUT /api/pricing` overrides on top). A model without a price costs 0 (its usage row still has its counts).
 */

const PER = 1_000_000;

/** Token counts an image reply reports (gpt-image-1 `usage`, Gemini `usageMetadata`). */
export interface ImageTokenUsage {
  textIn: number;
  imageIn: number;
  imageOut: number;
}

/** The price of one image by quality and size, from a `perImage` rate (one price, or `quality/size` keys with `*`). */
export function perImagePrice(perImage: Price['perImage'], quality: string | undefined, size: string | undefined): number | undefined {
  if (perImage === undefined) return undefined;
  if (typeof perImage === 'number') return perImage;
  const q = quality ?? 'standard';
  const s = size ?? '1024x1024';
  return perImage[`${q}/${s}`] ?? perImage[`${q}/*`] ?? perImage[`*/${s}`] ?? perImage['*/*'];
}

/**
 * Cost of an image reply: by its reported tokens (text input at `input`, image input at `imageInput`,
 * image output at `imageOutput`) when the price has image token rates or no per-image price; else per
 * image by quality and size (n images); null (unpriced) for a model without a price.
 */
export function imageCost(price: Price | undefined, opts: { n: number; size?: string; quality?: string; tokens?: ImageTokenUsage }): number | null {
  if (!price) return null;
  const t = opts.tokens;
  if (t && (price.imageOutput !== undefined || price.perImage === undefined)) {
    return (t.textIn * price.input + t.imageIn * (price.imageInput ?? price.input) + t.imageOut * (price.imageOutput ?? price.output)) / PER;
  }
  const each = perImagePrice(price.perImage, opts.quality, opts.size) ?? 0;
  return each * Math.max(1, opts.n);
}

/**
 * Cost of a transcription or translation: by reported tokens when the price has an audio token rate
 * (text input at `input`, audio input at `audioInput`, text output at `output`), else per minute of audio
 * (at least `minAudioSeconds`), else by tokens at the text rates; 0 otherwise; null for a model without a price.
 */
export function transcriptionCost(price: Price | undefined, opts: { seconds?: number; tokens?: { textIn: number; audioIn: number; textOut: number } }): number | null {
  if (!price) return null;
  const t = opts.tokens;
  const byTokens = (): number => (t!.textIn * price.input + t!.audioIn * (price.audioInput ?? price.input) + t!.textOut * price.output) / PER;
  if (t && price.audioInput !== undefined) return byTokens();
  if (price.perAudioMinute !== undefined && opts.seconds !== undefined) return (Math.max(opts.seconds, price.minAudioSeconds ?? 0) * price.perAudioMinute) / 60;
  return t ? byTokens() : 0;
}

/** Cost of a speech reply: by the characters of its input text, else by the tokens its SSE stream reported. */
export function speechCost(price: Price | undefined, characters: number, tokens?: { inputTokens: number; outputTokens: number }): number | null {
  if (!price) return null;
  if (price.perMillionCharacters !== undefined) return (characters * price.perMillionCharacters) / PER;
  return tokens ? (tokens.inputTokens * price.input + tokens.outputTokens * (price.audioOutput ?? price.output)) / PER : 0;
}
