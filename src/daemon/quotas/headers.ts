/**
 * Client-supplied header values made safe to log (spec proxy rule 8: the relay route's forwarded-for and
 * user-agent are stripped of control characters and limited to 256 characters before being logged).
 */

/** The spec's cap for forwarded header values in logs. */
export const FORWARDED_HEADER_MAX = 256;

// C0 controls (U+0000-U+001F, including TAB, CR, LF), DEL (U+007F) and C1 controls (U+0080-U+009F), plus
// the Unicode line/paragraph separators and bidi overrides, which can also forge or disguise log lines.
// eslint-disable-next-line no-control-regex
const CONTROL_RE = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

/**
 * Removes control characters, then keeps at most `max` characters (Unicode code points, so a surrogate
 * pair is never cut in half). null/undefined become ''. The result is safe for one log line.
 */
export function sanitizeHeaderValue(v: string | null | undefined, max = FORWARDED_HEADER_MAX): string {
  if (v === null || v === undefined) return '';
  const limit = Math.max(0, Math.floor(max));
  // Header values are bounded by the HTTP parser (16 KiB by default), so one pass over the whole value is cheap.
  const s = String(v).replace(CONTROL_RE, '');
  if (s.length <= limit) return s;
  let out = '';
  let count = 0;
  for (const ch of s) {
    if (count === limit) break;
    out += ch;
    count++;
  }
  return out;
}
