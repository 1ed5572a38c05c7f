/**
 * The one loader of gpt-tokenizer (o200k) in the daemon's main thread. Its tables take about half a second
 * and tens of MB to load, so it is imported on first use (an idle daemon never carries them); every caller
 * (count_tokens estimates, compression fitting, memory token counts, the usage estimator's fallback) shares
 * the one promise. The usage estimator's worker thread loads its own copy, off this thread.
 */
export interface Tokenizer {
  encode(text: string): number[];
  decode(tokens: number[]): string;
  countTokens(text: string): number;
}

let loading: Promise<Tokenizer> | undefined;
let loaded: Tokenizer | undefined;

/** Starts loading the tokenizer (once); resolves when it can count. */
export function tokenizer(): Promise<Tokenizer> {
  loading ??= import('gpt-tokenizer').then((m) => {
    loaded = { encode: m.encode, decode: m.decode, countTokens: m.countTokens as (text: string) => number };
    return loaded;
  });
  return loading;
}

/** The tokenizer when already loaded (a synchronous fast path), else undefined. */
export function tokenizerIfLoaded(): Tokenizer | undefined {
  return loaded;
}
