/**
 * Token counting that stays linear in the text length. Byte-pair encoding is quadratic in the length of
 * one pre-tokenized piece, so a long run without whitespace (a pasted base64 blob, minified code) can take
 * seconds for a few tens of kilobytes; such runs are counted in short slices instead. Ordinary text is
 * counted in large slices so a caller can yield to the event loop between them.
 */

/** Runs of this many non-space characters or more are counted in slices of LONG_RUN_SLICE. */
const LONG_RUN_RE = /\S{256,}/g;
const LONG_RUN_SLICE = 128;
/** Characters of ordinary text counted per call. */
export const TEXT_SLICE = 32 * 1024;

export type CountFn = (text: string) => number;

/** Splits text into pieces whose token counts add up to (about) the whole text's count. */
export function* countPieces(text: string): Generator<string> {
  let rest = '';
  let last = 0;
  LONG_RUN_RE.lastIndex = 0;
  for (let m = LONG_RUN_RE.exec(text); m; m = LONG_RUN_RE.exec(text)) {
    rest += `${text.slice(last, m.index)} `;
    last = m.index + m[0].length;
    for (let i = 0; i < m[0].length; i += LONG_RUN_SLICE) yield m[0].slice(i, i + LONG_RUN_SLICE);
  }
  rest += text.slice(last);
  for (let i = 0; i < rest.length; i += TEXT_SLICE) yield rest.slice(i, i + TEXT_SLICE);
}

/** Counts a whole text synchronously (worker thread, or small texts). */
export function countText(text: string, count: CountFn): number {
  let total = 0;
  for (const piece of countPieces(text)) if (piece.trim()) total += count(piece);
  return total;
}

/** The cheap fallback when no tokenizer is at hand (shutdown): about four characters per token. */
export function heuristicCount(text: string): number {
  return Math.ceil(text.length / 4);
}
