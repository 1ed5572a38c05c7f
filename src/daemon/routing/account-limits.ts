/**
 * Account-wide limits (issue 30 item 5): what providers say in their reply headers about an account's
 * remaining quota, kept per account in memory, and when a reply says a limit is used up until a reset.
 *
 * - OpenAI (and OpenAI-compatible servers): `x-ratelimit-{limit,remaining,reset}-{requests,tokens}`; resets
 *   are durations (`6m0s`, `59.1s`, `20ms`).
 * - Anthropic: `anthropic-ratelimit-{requests,tokens,input-tokens,output-tokens}-{limit,remaining,reset}`
 *   (RFC 3339 resets) and, for subscription (OAuth) accounts, `anthropic-ratelimit-unified-status`
 *   (`allowed`, `allowed_warning`, `rejected`), `-unified-reset` (epoch seconds) and per-window
 *   `anthropic-ratelimit-unified-{5h,7d}-utilization` (0..1) / `-reset`.
 * - ChatGPT Codex: `x-codex-{primary,secondary}-used-percent`, `-window-minutes`, `-reset-after-seconds`
 *   / `-reset-at`.
 *
 * Reading a reply costs a few property lookups when it carries none of these; a reply that does updates
 * the account's windows in place (objects are made once per account and window).
 */
import { secondsUntil } from './clock.js';
import { tryParseRetryAfter } from './retry-after.js';

/** Reply headers as the upstream client gives them: lower-case names, repeated ones as arrays. */
export type ReplyHeaders = Record<string, string | string[] | undefined>;

/** One limit window of an account as last reported. */
export interface LimitWindow {
  /** `requests`, `tokens`, `input-tokens`, `output-tokens`, `unified`, `unified-5h`, `codex-primary`... */
  name: string;
  limit: number | null;
  remaining: number | null;
  /** Share of the window used, 0..1, when the provider reports a share instead of counts. */
  used: number | null;
  /** When the window resets (epoch ms), when said. */
  resetAt: number | null;
}

/** An account's windows and when they were last reported. */
export interface AccountLimitState {
  windows: Map<string, LimitWindow>;
  updatedAt: number;
}

/** A window as the management API shows it. */
export interface LimitWindowView extends LimitWindow {
  /** Share left, 0..1 (1 once the reset time has passed); null when neither counts nor a share are known. */
  left: number | null;
  resetSeconds: number | null;
}

const FAMILIES = ['requests', 'tokens'] as const;
const ANTHROPIC_FAMILIES = ['requests', 'tokens', 'input-tokens', 'output-tokens'] as const;
const CODEX_WINDOWS = ['primary', 'secondary'] as const;
const UNIFIED_WINDOWS = ['5h', '7d', '7d_opus', '7d_sonnet'] as const;

function one(h: ReplyHeaders, name: string): string | undefined {
  const v = h[name];
  return Array.isArray(v) ? v[0] : v;
}

function num(v: string | undefined): number | null {
  if (v === undefined || v.trim() === '') return null;
  const n = Number(v);
  return Number.isFinite(n) ? n : null;
}

const DURATION_RE = /^(?:(\d+(?:\.\d+)?)h)?(?:(\d+(?:\.\d+)?)m(?!s))?(?:(\d+(?:\.\d+)?)s)?(?:(\d+(?:\.\d+)?)ms)?$/;

/** OpenAI's reset durations (`1h2m3.5s`, `6m0s`, `20ms`, `0s`) in ms; undefined when unreadable. */
export function parseDurationMs(v: string | undefined): number | undefined {
  if (!v) return undefined;
  const text = v.trim();
  if (/^\d+(?:\.\d+)?$/.test(text)) return Number(text) * 1000;
  const m = DURATION_RE.exec(text);
  if (!m || text === '') return undefined;
  const [, h, min, s, ms] = m;
  return Number(h ?? 0) * 3_600_000 + Number(min ?? 0) * 60_000 + Number(s ?? 0) * 1000 + Number(ms ?? 0);
}

/** An absolute reset (RFC 3339, HTTP date, epoch s or ms) as epoch ms; undefined when unreadable. */
function resetAtOf(v: string | undefined, now: number): number | undefined {
  const seconds = tryParseRetryAfter(v, now);
  if (seconds === undefined) return undefined;
  // A bare small number is a delay; tryParseRetryAfter rounds up to whole seconds from now either way.
  return now + seconds * 1000;
}

/**
 * The windows a reply reports, each passed to `put` (name, limit, remaining, used share, reset epoch ms).
 * Nothing is called for a reply without rate-limit headers.
 */
function readWindows(
  h: ReplyHeaders,
  now: number,
  put: (name: string, limit: number | null, remaining: number | null, used: number | null, resetAt: number | null) => void,
): void {
  if (h['x-ratelimit-remaining-requests'] !== undefined || h['x-ratelimit-remaining-tokens'] !== undefined) {
    for (const f of FAMILIES) {
      const remaining = num(one(h, `x-ratelimit-remaining-${f}`));
      if (remaining === null) continue;
      const reset = parseDurationMs(one(h, `x-ratelimit-reset-${f}`));
      put(f, num(one(h, `x-ratelimit-limit-${f}`)), remaining, null, reset === undefined ? null : now + reset);
    }
  }
  if (h['anthropic-ratelimit-requests-remaining'] !== undefined || h['anthropic-ratelimit-tokens-remaining'] !== undefined || h['anthropic-ratelimit-input-tokens-remaining'] !== undefined) {
    for (const f of ANTHROPIC_FAMILIES) {
      const remaining = num(one(h, `anthropic-ratelimit-${f}-remaining`));
      if (remaining === null) continue;
      put(f, num(one(h, `anthropic-ratelimit-${f}-limit`)), remaining, null, resetAtOf(one(h, `anthropic-ratelimit-${f}-reset`), now) ?? null);
    }
  }
  if (h['anthropic-ratelimit-unified-status'] !== undefined) {
    const status = one(h, 'anthropic-ratelimit-unified-status');
    const reset = resetAtOf(one(h, 'anthropic-ratelimit-unified-reset'), now) ?? null;
    put('unified', null, null, status === 'rejected' ? 1 : null, reset);
    for (const w of UNIFIED_WINDOWS) {
      const used = num(one(h, `anthropic-ratelimit-unified-${w}-utilization`));
      if (used === null) continue;
      put(`unified-${w}`, null, null, Math.min(1, Math.max(0, used)), resetAtOf(one(h, `anthropic-ratelimit-unified-${w}-reset`), now) ?? null);
    }
  }
  if (h['x-codex-primary-used-percent'] !== undefined || h['x-codex-secondary-used-percent'] !== undefined) {
    for (const w of CODEX_WINDOWS) {
      const pct = num(one(h, `x-codex-${w}-used-percent`));
      if (pct === null) continue;
      const after = num(one(h, `x-codex-${w}-reset-after-seconds`));
      const at = resetAtOf(one(h, `x-codex-${w}-reset-at`), now);
      put(`codex-${w}`, null, null, Math.min(1, Math.max(0, pct / 100)), after !== null ? now + after * 1000 : (at ?? null));
    }
  }
}

/** Whether a reply carries any of the rate-limit headers read here (the common no-header case allocates nothing). */
function hasLimitHeaders(h: ReplyHeaders): boolean {
  return (
    h['x-ratelimit-remaining-requests'] !== undefined ||
    h['x-ratelimit-remaining-tokens'] !== undefined ||
    h['anthropic-ratelimit-requests-remaining'] !== undefined ||
    h['anthropic-ratelimit-tokens-remaining'] !== undefined ||
    h['anthropic-ratelimit-input-tokens-remaining'] !== undefined ||
    h['anthropic-ratelimit-unified-status'] !== undefined ||
    h['x-codex-primary-used-percent'] !== undefined ||
    h['x-codex-secondary-used-percent'] !== undefined
  );
}

/** Share of a window left now: 1 once its reset passed; from counts, else from the used share. */
function leftOf(w: LimitWindow, now: number): number | null {
  if (w.resetAt !== null && w.resetAt <= now) return 1;
  if (w.remaining !== null) {
    if (w.limit !== null && w.limit > 0) return Math.max(0, Math.min(1, w.remaining / w.limit));
    return w.remaining > 0 ? 1 : 0;
  }
  return w.used === null ? null : 1 - w.used;
}

/**
 * Seconds until the last of the limits a reply says are used up resets: a window at zero remaining (or
 * fully used, or Anthropic's unified status `rejected`) with a reset time in the future. Undefined when no
 * limit is used up or none says when it resets. Read on failed replies, to cool the whole account.
 */
export function exhaustedSeconds(h: ReplyHeaders, now = Date.now()): number | undefined {
  let until = 0;
  readWindows(h, now, (_name, _limit, remaining, used, resetAt) => {
    const out = remaining !== null ? remaining <= 0 : used !== null && used >= 1;
    if (out && resetAt !== null && resetAt > until) until = resetAt;
  });
  return until > now ? secondsUntil(until, now) : undefined;
}

/** Whether a header name is one of the rate-limit headers read here (kept on failed replies for classification). */
export function isLimitHeader(name: string): boolean {
  return name.startsWith('x-ratelimit-') || name.startsWith('anthropic-ratelimit-') || name.startsWith('x-codex-');
}

/** The read side account selection needs (the `headroom` strategy). */
export interface HeadroomReader {
  /** Share left of the account's tightest window, 0..1; undefined when the provider never reported one. */
  headroom(connectionId: string): number | undefined;
}

/** Remaining quota per account, from reply headers; in memory, O(windows) per reply that reports any. */
export class AccountLimits implements HeadroomReader {
  private readonly accounts = new Map<string, AccountLimitState>();

  constructor(private readonly now: () => number = Date.now) {}

  /** Records what a reply of `connectionId` says about its limits (nothing when it says nothing). */
  observe(connectionId: string, headers: ReplyHeaders): void {
    if (!hasLimitHeaders(headers)) return;
    const now = this.now();
    let state = this.accounts.get(connectionId);
    readWindows(headers, now, (name, limit, remaining, used, resetAt) => {
      if (!state) this.accounts.set(connectionId, (state = { windows: new Map(), updatedAt: now }));
      state.updatedAt = now;
      const w = state.windows.get(name);
      if (!w) return void state.windows.set(name, { name, limit, remaining, used, resetAt });
      w.limit = limit;
      w.remaining = remaining;
      w.used = used;
      w.resetAt = resetAt;
    });
  }

  headroom(connectionId: string): number | undefined {
    const state = this.accounts.get(connectionId);
    if (!state) return undefined;
    const now = this.now();
    let min: number | undefined;
    for (const w of state.windows.values()) {
      const left = leftOf(w, now);
      if (left !== null && (min === undefined || left < min)) min = left;
    }
    return min;
  }

  /** Forgets an account (removed connection). */
  forget(connectionId: string): void {
    this.accounts.delete(connectionId);
  }

  /** Every account that reported limits, for the management API. */
  list(): Array<{ connectionId: string; headroom: number | null; updatedAt: string; windows: LimitWindowView[] }> {
    const now = this.now();
    const out = [];
    for (const [connectionId, state] of this.accounts) {
      const windows = [...state.windows.values()].map((w) => ({
        ...w,
        left: leftOf(w, now),
        resetSeconds: w.resetAt === null ? null : w.resetAt > now ? secondsUntil(w.resetAt, now) : 0,
      }));
      out.push({ connectionId, headroom: this.headroom(connectionId) ?? null, updatedAt: new Date(state.updatedAt).toISOString(), windows });
    }
    return out;
  }
}
