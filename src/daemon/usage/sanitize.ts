/** Longest header value the router stores or logs (spec "Limits": forwarded header cap). */
export const HEADER_VALUE_MAX = 256;

// C0 controls (CR, LF, TAB, NUL...), DEL, C1 controls, and the Unicode line/paragraph separators and
// bidi overrides that can forge or disguise log lines.
// eslint-disable-next-line no-control-regex
const CONTROL_RE = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

/**
 * A request header value made safe to store or log (spec, relay route: forwarded-for and user-agent stripped of control characters, at most 256 characters): control characters removed,
 * surrounding whitespace trimmed, at most 256 characters (a surrogate pair is never cut in half).
 * Returns null for a missing or empty value; an array value (repeated header) is joined with ", ".
 */
export function sanitizeHeaderValue(value: string | readonly string[] | null | undefined, max = HEADER_VALUE_MAX): string | null {
  if (value === null || value === undefined) return null;
  const joined = typeof value === 'string' ? value : value.join(', ');
  // Cap before the regex so a huge header costs O(cap), not O(size); control characters removed later
  // can only shorten it further.
  let s = joined.length > max * 4 ? joined.slice(0, max * 4) : joined;
  s = s.replace(CONTROL_RE, '').trim();
  if (s.length > max) {
    const code = s.charCodeAt(max - 1);
    s = s.slice(0, code >= 0xd800 && code <= 0xdbff ? max - 1 : max);
  }
  return s === '' ? null : s;
}
