/** Wire shapes of the price table routes (`/api/pricing`; docs/usage.md "Cost"). */

/**
 * Rates of the media and rerank endpoints, which are not billed per text token alone. Token rates are USD
 * per million tokens; the others USD per unit.
 */
export interface UnitRates {
  /** Image input tokens (edits); absent: the input rate. */
  imageInput?: number;
  /** Image output tokens; absent: the output rate. */
  imageOutput?: number;
  /** Audio input tokens (token-billed transcription); absent: the input rate. */
  audioInput?: number;
  /** Audio output tokens (token-billed speech); absent: the output rate. */
  audioOutput?: number;
  /** USD per image: one price, or by `quality/size` (`*` matches any, e.g. `hd/*`, `*\/1024x1024`). */
  perImage?: number | Record<string, number>;
  /** USD per minute of transcribed or translated audio. */
  perAudioMinute?: number;
  /** The shortest audio billed per request, seconds (Groq bills at least 10 s). */
  minAudioSeconds?: number;
  /** USD per million characters of speech input. */
  perMillionCharacters?: number;
  /** USD per rerank search unit (Cohere). */
  perSearchUnit?: number;
}

/** One row of the effective price table, as `GET /api/pricing` lists it (unit rates only when set). */
export interface PriceEntry extends UnitRates {
  /** The provider as people read it (a node's prefix). */
  provider: string;
  model: string;
  input: number;
  output: number;
  cacheRead: number | null;
  cacheWrite: number | null;
  reasoning: number | null;
  /** `override` when the user's price is in effect, `default` for the shipped one. */
  source: 'default' | 'override';
  /** True when a shipped default exists (deleting an override restores it). */
  hasDefault: boolean;
}
