import type { Detector, Match } from '../types.js';

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * Blocked terms: a configured list, matched case-insensitively (unless told otherwise) and as whole words
 * (letters and digits on either side break a match), longest term first.
 */
export function termsDetector(terms: readonly string[], opts: { caseSensitive?: boolean; wholeWord?: boolean } = {}): Detector | undefined {
  const list = [...new Set(terms.map((t) => t.trim()).filter(Boolean))].sort((a, b) => b.length - a.length);
  if (list.length === 0) return undefined;
  const body = list.map((t) => escape(t).replace(/\s+/g, '\\s+')).join('|');
  const source = opts.wholeWord === false ? `(?:${body})` : `(?<![\\p{L}\\p{N}_])(?:${body})(?![\\p{L}\\p{N}_])`;
  const re = new RegExp(source, opts.caseSensitive ? 'gu' : 'giu');
  const scan = (text: string): Match[] =>
    [...text.matchAll(re)].map((m) => ({ guardrail: 'blockedTerms', kind: 'blocked_term', start: m.index, end: m.index + m[0].length }));
  return { guardrail: 'blockedTerms', window: Math.max(...list.map((t) => t.length)) + 16, scan };
}
