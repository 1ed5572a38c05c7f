/** Number, time and text formatting shared by the plain commands and the TUIs (pure, locale-free). */

/** 1234567 -> "1,234,567" (the same on every machine, unlike toLocaleString). */
export function int(n: number): string {
  const s = String(Math.round(Math.abs(n)));
  return `${n < 0 ? '-' : ''}${s.replace(/\B(?=(\d{3})+(?!\d))/g, ',')}`;
}

/** Token counts, compact: 950, 12.3k, 4.56M. */
export function tokens(n: number): string {
  if (Math.abs(n) < 1000) return String(Math.round(n));
  if (Math.abs(n) < 1_000_000) return `${trim(n / 1000)}k`;
  if (Math.abs(n) < 1_000_000_000) return `${trim(n / 1_000_000)}M`;
  return `${trim(n / 1_000_000_000)}B`;
}

const trim = (x: number) => (x >= 100 ? x.toFixed(0) : x >= 10 ? x.toFixed(1) : x.toFixed(2)).replace(/\.?0+$/, '');

/** US dollars: $0 exactly, four decimals below a dollar, two above. */
export function usd(n: number): string {
  if (n === 0) return '$0';
  if (Math.abs(n) < 1) return `$${n.toFixed(4)}`;
  return `$${int(Math.floor(n))}.${n.toFixed(2).split('.')[1]}`;
}

/** A row's cost: US dollars, or `unpriced` when no price is known (null), never a made-up $0. */
export function cost(n: number | null | undefined): string {
  return n === null || n === undefined ? 'unpriced' : usd(n);
}

/**
 * A total's cost with its unpriced rows named: `$1.2000 (3 requests unpriced)`, and only `3 requests
 * unpriced` when no priced row cost anything (never a bare $0 for costs that are unknown).
 */
export function costTotal(n: number, unpriced: number | undefined): string {
  if (!unpriced) return usd(n);
  const left = `${int(unpriced)} request${unpriced === 1 ? '' : 's'} unpriced`;
  return n ? `${usd(n)} (${left})` : left;
}

/** Milliseconds: 850ms, 1.2s, 2m 5s. */
export function ms(n: number | null | undefined): string {
  if (n === null || n === undefined) return '-';
  if (n < 1000) return `${Math.round(n)}ms`;
  if (n < 60_000) return `${(n / 1000).toFixed(1)}s`;
  return `${Math.floor(n / 60_000)}m ${Math.round((n % 60_000) / 1000)}s`;
}

/** Seconds of uptime: 45s, 3m 2s, 5h 7m, 2d 3h. */
export function uptime(s: number): string {
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m ${s % 60}s`;
  if (s < 86_400) return `${Math.floor(s / 3600)}h ${Math.floor((s % 3600) / 60)}m`;
  return `${Math.floor(s / 86_400)}d ${Math.floor((s % 86_400) / 3600)}h`;
}

/** A fraction as a percentage: 0.0312 -> "3.1%". */
export function pct(x: number): string {
  return `${(x * 100).toFixed(x === 0 || x >= 0.1 ? 0 : 1)}%`;
}

/** HH:MM:SS of an ISO timestamp, in UTC so output is the same wherever it runs (tests, screenshots). */
export function clock(iso: string): string {
  return iso.length >= 19 ? iso.slice(11, 19) : iso;
}

/** "YYYY-MM-DD HH:MM:SS" of an ISO timestamp (UTC). */
export function stamp(iso: string | null | undefined): string {
  if (!iso) return '-';
  return iso.length >= 19 ? `${iso.slice(0, 10)} ${iso.slice(11, 19)}` : iso;
}

/** Cuts text to a width, marking the cut with an ellipsis. */
export function fit(text: string, width: number): string {
  if (width <= 0) return '';
  if (text.length <= width) return text;
  return width === 1 ? '…' : `${text.slice(0, width - 1)}…`;
}

/** Pads or cuts to exactly `width` characters. */
export function cell(text: string, width: number, align: 'left' | 'right' = 'left'): string {
  const t = fit(text, width);
  return align === 'right' ? t.padStart(width) : t.padEnd(width);
}

const BARS = '▁▂▃▄▅▆▇█';

/** A sparkline of the last `width` values, scaled to their maximum (all zero: a flat baseline). */
export function sparkline(values: readonly number[], width: number): string {
  const tail = values.slice(-width);
  const max = Math.max(0, ...tail);
  const line = tail.map((v) => (max === 0 || v <= 0 ? ' ' : BARS[Math.min(7, Math.max(0, Math.ceil((v / max) * 8) - 1))]!)).join('');
  return line.padStart(width, ' ');
}

/** The class of an HTTP status for display and filters: "2xx", "4xx", "5xx". */
export function statusClass(status: number): string {
  return `${Math.floor(status / 100)}xx`;
}

/** Parses a period like 15m, 24h, 7d, 30d into milliseconds; undefined when it is not one. */
export function parseSpan(raw: string): number | undefined {
  const m = /^(\d+)\s*(s|m|h|d|w)$/.exec(raw.trim());
  if (!m) return undefined;
  const unit = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 7 * 86_400_000 }[m[2] as 's' | 'm' | 'h' | 'd' | 'w'];
  return Number(m[1]) * unit;
}
