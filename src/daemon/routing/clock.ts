/**
 * Time helpers shared by the routing modules. Every module takes an injectable clock instead of calling
 * `Date.now()` so tests can move time exactly and never sleep.
 */

/** Returns the current time in epoch milliseconds. */
export type Clock = () => number;

/** The default clock: wall time. */
export const systemClock: Clock = () => Date.now();

/** Milliseconds in one UTC day. */
export const DAY_MS = 86_400_000;

/** Index of the UTC day containing `ms` (days since the epoch); used as a period id for daily counters. */
export function utcDayIndex(ms: number): number {
  return Math.floor(ms / DAY_MS);
}

/** Epoch ms of the next UTC midnight strictly after `ms`. */
export function nextUtcMidnight(ms: number): number {
  return (utcDayIndex(ms) + 1) * DAY_MS;
}

/** Index of the UTC calendar month containing `ms` (year * 12 + month); a period id for monthly budgets. */
export function utcMonthIndex(ms: number): number {
  const d = new Date(ms);
  return d.getUTCFullYear() * 12 + d.getUTCMonth();
}

/** Epoch ms of the first instant of the next UTC calendar month after `ms`. */
export function nextUtcMonthStart(ms: number): number {
  const d = new Date(ms);
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1);
}

/** Whole seconds (rounded up) from `now` until `untilMs`, never below `min`. */
export function secondsUntil(untilMs: number, now: number, min = 1): number {
  return Math.max(min, Math.ceil((untilMs - now) / 1000));
}
