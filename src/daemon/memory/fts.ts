/**
 * Turns user text into a safe FTS5 MATCH expression: only runs of letters and digits survive, each is
 * double-quoted (a quoted string is always a plain term, so `AND`, `NEAR(`, `*`, `:` or an unbalanced quote
 * in the input can never be read as syntax), and the terms are OR-ed (bm25 ranks documents matching more
 * and rarer terms first). Common English stopwords are dropped unless nothing else is left.
 */
const STOPWORDS = new Set(
  (
    'a an the and or but if then else of to in on at by for with from into onto about as is are was were be been being ' +
    'do does did have has had i me my mine we us our you your he him his she her it its they them their this that these ' +
    'those what which who whom whose when where why how not no so than too very can could should would will shall may might ' +
    'must just also any some all each there here up down out over under again further once am s t'
  ).split(' '),
);

const MAX_TERMS = 64;
const MAX_TERM_LENGTH = 64;

/** Lower-cased word terms of a text (letters and digits of any script). */
export function terms(text: string): string[] {
  return (text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []).map((t) => t.slice(0, MAX_TERM_LENGTH));
}

/** The terms a search looks for: distinct, stopwords dropped unless nothing else is left, at most 64. */
export function searchTerms(text: string): string[] {
  const all = [...new Set(terms(text))];
  const content = all.filter((t) => !STOPWORDS.has(t));
  return (content.length ? content : all).slice(0, MAX_TERMS);
}

/** The FTS5 MATCH expression, or '' when the text holds no searchable term. */
export function ftsQuery(text: string): string {
  return searchTerms(text)
    .map((t) => `"${t}"`)
    .join(' OR ');
}

/**
 * The same terms as a PostgreSQL `to_tsquery` expression (`'a' | 'b'`), or ''. Terms are letters and digits
 * only, so single-quoting each makes it a plain lexeme whatever the user typed.
 */
export function tsQuery(text: string): string {
  return searchTerms(text)
    .map((t) => `'${t}'`)
    .join(' | ');
}
