/**
 * Reading upstream retry hints: the `Retry-After` header (seconds, epoch timestamp or date) and the
 * free-text forms providers put in error messages (`reset after 2h7m23s`, `retry after 12s`).
 * All results are whole seconds, rounded up, at least 1.
 */

/** The longest upstream wait honored, in seconds (24 hours). Longer hints are capped to this. */
export const MAX_RETRY_SECONDS = 86_400;

/** Seconds used when no hint can be read. */
export const FALLBACK_RETRY_SECONDS = 1;

/** Numbers at or above this are epoch timestamps rather than a delay in seconds (spec rule). */
const EPOCH_THRESHOLD = 1_000_000_000;

/**
 * Epoch timestamps at or above this are milliseconds, below it seconds. 1e12 ms is September 2001 and
 * 1e12 s is ~31,700 years away, so the two ranges cannot be confused for any realistic date.
 */
const EPOCH_MS_THRESHOLD = 1_000_000_000_000;

const NUMERIC_RE = /^[+-]?(?:\d+\.?\d*|\.\d+)(?:e[+-]?\d+)?$/i;
// V8's Date.parse accepts nonsense such as "foo 1", so a string only counts as a date when it looks like
// an HTTP-date (a month name plus a clock time) or an ISO-8601 date.
const MONTH_RE = /\b(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\b/i;
const CLOCK_RE = /\b\d{1,2}:\d{2}(?::\d{2})?\b/;
const ZONE_RE = /(?:\b(?:GMT|UTC|UT)\b|[+-]\d{4}\b)/i;
const ISO_RE = /^\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?$/i;

/**
 * Parses a `Retry-After` value into seconds from `now`, or `undefined` when it cannot be read.
 * Below 1e9 the number is a delay in seconds (rounded up); from 1e9 it is an epoch timestamp, in
 * milliseconds from 1e12 and in seconds below that. Dates and ISO timestamps are converted to seconds
 * from now. Past times and non-positive delays give 1.
 */
export function tryParseRetryAfter(value: string | number | undefined | null, now: number): number | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value === 'number') return fromNumber(value, now);
  const text = value.trim();
  if (text === '') return undefined;
  if (NUMERIC_RE.test(text)) return fromNumber(Number(text), now);
  const httpDate = MONTH_RE.test(text) && CLOCK_RE.test(text);
  if (!httpDate && !ISO_RE.test(text)) return undefined;
  // HTTP-dates are always GMT (RFC 9110); asctime carries no zone and would otherwise parse as local time.
  const at = Date.parse(httpDate && !ZONE_RE.test(text) ? `${text} GMT` : text);
  return Number.isNaN(at) ? undefined : atLeastOne((at - now) / 1000);
}

/** Like {@link tryParseRetryAfter} but returns the fallback (1 second) when the value cannot be read. */
export function parseRetryAfter(value: string | number | undefined | null, now: number): number {
  return tryParseRetryAfter(value, now) ?? FALLBACK_RETRY_SECONDS;
}

function fromNumber(n: number, now: number): number | undefined {
  if (!Number.isFinite(n)) return undefined;
  if (n < EPOCH_THRESHOLD) return atLeastOne(n);
  const atMs = n >= EPOCH_MS_THRESHOLD ? n : n * 1000;
  return atLeastOne((atMs - now) / 1000);
}

function atLeastOne(seconds: number): number {
  return Math.max(1, Math.ceil(seconds));
}

// One optional component per unit. Long unit words ("12 seconds", "5 mins") are accepted too; the
// `(?![a-z])` guards stop "500ms" from reading as 500 minutes.
const NUM = String.raw`(\d+(?:\.\d+)?)\s*`;
const DURATION =
  String.raw`(?:${NUM}h(?:ours?|rs?)?(?![a-z]))?\s*` +
  String.raw`(?:${NUM}m(?:in(?:ute)?s?)?(?![a-z]))?\s*` +
  String.raw`(?:${NUM}s(?:ec(?:ond)?s?)?(?![a-z]))?`;
const HINT_RE = new RegExp(String.raw`\b(?:resets?|retry)\s+after\s+${DURATION}`, 'gi');

/**
 * Reads a wait from an error body: a usage-limit reply's `resets_in_seconds` / `resets_at` fields, or free
 * text such as `reset after 2h7m23s`, `reset after 45m`, `Retry after 12s`
 * (case-insensitive, anywhere in the text; each of h/m/s optional, spaces between parts and long unit
 * words such as `12 seconds` allowed).
 * Returns seconds rounded up, or `undefined` when there is no such phrase. Not capped: see
 * {@link retryHintSeconds} for the capped combination.
 */
export function parseRetryHintFromText(text: string | undefined | null, now = Date.now()): number | undefined {
  if (!text) return undefined;
  const reset = parseResetFields(text, now);
  if (reset !== undefined) return reset;
  for (const match of text.matchAll(HINT_RE)) {
    const [, h, m, s] = match;
    // "retry after the quota resets" matches with no components; keep looking for a real one.
    if (h === undefined && m === undefined && s === undefined) continue;
    const total = Number(h ?? 0) * 3600 + Number(m ?? 0) * 60 + Number(s ?? 0);
    return Math.ceil(total);
  }
  return undefined;
}

const RESETS_IN_RE = /"resets_in_seconds"\s*:\s*(\d+(?:\.\d+)?)/;
const RESETS_AT_RE = /"resets_at"\s*:\s*(\d+(?:\.\d+)?)/;

/**
 * The reset of a usage-limit reply in JSON fields, as the ChatGPT (Codex) backend sends it with
 * `usage_limit_reached`: `resets_in_seconds`, or `resets_at` as an epoch time. Seconds from now, or undefined.
 */
function parseResetFields(text: string, now: number): number | undefined {
  const inSeconds = RESETS_IN_RE.exec(text);
  if (inSeconds) return atLeastOne(Number(inSeconds[1]));
  const at = RESETS_AT_RE.exec(text);
  return at ? fromNumber(Number(at[1]), now) : undefined;
}

/** Response headers as a `Headers` object or a plain record (Node's `IncomingHttpHeaders` shape). */
export type HeaderSource = Headers | Record<string, string | string[] | number | undefined> | undefined | null;

/** Reads one header case-insensitively from either header shape; arrays yield their first value. */
export function headerValue(headers: HeaderSource, name: string): string | undefined {
  if (!headers) return undefined;
  if (typeof (headers as Headers).get === 'function') return (headers as Headers).get(name) ?? undefined;
  const record = headers as Record<string, string | string[] | number | undefined>;
  const lower = name.toLowerCase();
  for (const key in record) {
    if (key.toLowerCase() !== lower) continue;
    const value = record[key];
    return Array.isArray(value) ? value[0] : value === undefined ? undefined : String(value);
  }
  return undefined;
}

/**
 * The wait to honor after an upstream failure: the `Retry-After` header when readable, else a hint in
 * the body text, else the 1 second fallback; always between 1 second and 24 hours.
 */
export function retryHintSeconds(source: { headers?: HeaderSource; bodyText?: string | null }, now: number): number {
  const fromHeader = tryParseRetryAfter(headerValue(source.headers, 'retry-after'), now);
  const seconds = fromHeader ?? parseRetryHintFromText(source.bodyText, now) ?? FALLBACK_RETRY_SECONDS;
  return Math.min(MAX_RETRY_SECONDS, Math.max(1, seconds));
}

/** Formats seconds for people: `2h 7m 23s`, `2m 5s`, `45s`; zero parts are left out; 0 gives `0s`. */
export function humanizeSeconds(seconds: number): string {
  const total = Number.isFinite(seconds) && seconds > 0 ? Math.ceil(seconds) : 0;
  const h = Math.floor(total / 3600);
  const m = Math.floor((total % 3600) / 60);
  const s = total % 60;
  const parts: string[] = [];
  if (h) parts.push(`${h}h`);
  if (m) parts.push(`${m}m`);
  if (s || parts.length === 0) parts.push(`${s}s`);
  return parts.join(' ');
}
