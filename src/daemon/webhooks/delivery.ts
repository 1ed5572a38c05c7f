import { setTimeout as sleep } from 'node:timers/promises';
import type { Dispatcher } from 'undici';
import { sendUpstream } from '../net/upstream.js';
import type { AnyRouterEvent } from '../events/types.js';
import { DestinationError } from './destination.js';
import { signBody } from './signing.js';

/**
 * One webhook POST and the retry loop around it.
 *
 * Rules (spec "Delivery" and "Limits"): 10 s per attempt; 2xx is success; 5xx and network errors are
 * retried up to 3 times after 1 s, 2 s and 4 s; 3xx and 4xx are final failures (redirects are never
 * followed: undici's `request` does not follow them, and a receiver must not bounce us to another host).
 * A destination refused by the public-destination check is final too: retrying cannot make it public.
 */

/** Timing of deliveries; injectable so unit tests need not wait seconds. */
export interface DeliveryPolicy {
  /** Delay before each retry; its length is the number of retries. */
  retryDelaysMs: readonly number[];
  /** Budget of one attempt: connect, headers and body. */
  timeoutMs: number;
}

/** The spec's policy: 10 s per attempt, retries after 1 s, 2 s, 4 s. */
export const DEFAULT_POLICY: DeliveryPolicy = { retryDelaysMs: [1000, 2000, 4000], timeoutMs: 10_000 };

/** Outcome of one attempt. */
export interface AttemptResult {
  /** HTTP status; 0 for a network error, a timeout or a blocked destination. */
  status: number;
  ok: boolean;
  retryable: boolean;
  /** The first `captureBytes` bytes of the reply (UTF-8 decoded); empty when not captured. */
  responseBody: string;
  /** Empty on success; a short, sanitized reason otherwise (no raw exception text, no URL). */
  error: string;
}

/** The spec's delivery headers; the signature covers exactly `rawBody`. */
export function deliveryHeaders(event: AnyRouterEvent, rawBody: string, secret: string): Record<string, string> {
  return {
    'content-type': 'application/json',
    'user-agent': 'Service-Webhook/1.0',
    'x-webhook-event': event.event,
    'x-webhook-timestamp': event.timestamp,
    'x-webhook-signature': signBody(secret, rawBody),
  };
}

/** A failed attempt that never reached the receiver. */
export function failedAttempt(error: string, retryable = false): AttemptResult {
  return { status: 0, ok: false, retryable, responseBody: '', error };
}

/** POSTs once. Never throws: every failure becomes an `AttemptResult`. */
export async function postOnce(
  url: string,
  body: string,
  headers: Record<string, string>,
  opts: { dispatcher: Dispatcher; timeoutMs: number; captureBytes?: number; signal?: AbortSignal },
): Promise<AttemptResult> {
  const ac = new AbortController();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    ac.abort();
  }, opts.timeoutMs);
  const onAbort = () => ac.abort();
  opts.signal?.addEventListener('abort', onAbort, { once: true });
  try {
    const res = await sendUpstream({ url, method: 'POST', headers, body, dispatcher: opts.dispatcher, signal: ac.signal });
    const capture = opts.captureBytes ?? 0;
    // The body must be read or dropped, or the pooled connection is held until it times out.
    const responseBody = capture > 0 ? await res.textUpTo(capture) : (res.discard(), '');
    const status = res.statusCode;
    const ok = status >= 200 && status < 300;
    return { status, ok, retryable: status >= 500, responseBody, error: ok ? '' : `receiver replied ${status}` };
  } catch (err) {
    if (err instanceof DestinationError) return failedAttempt(err.message, false);
    if (timedOut) return failedAttempt(`timed out after ${opts.timeoutMs} ms`, true);
    if (opts.signal?.aborted) return failedAttempt('delivery cancelled (shutting down)', false);
    return failedAttempt(networkReason(err), true);
  } finally {
    clearTimeout(timer);
    opts.signal?.removeEventListener('abort', onAbort);
  }
}


// Error codes are safe to show; messages may carry addresses or URLs (a Telegram URL holds the bot token).
function networkReason(err: unknown): string {
  const e = err as { code?: unknown; cause?: { code?: unknown } };
  const code = typeof e?.code === 'string' ? e.code : typeof e?.cause?.code === 'string' ? e.cause.code : '';
  return code ? `network error (${code})` : 'network error';
}

/** Hooks of the retry loop. */
export interface RetryHooks {
  /** Called after every attempt (records last_status and last_triggered_at). */
  onAttempt?: (result: AttemptResult, attempt: number) => void;
  /** Checked before each retry; false stops (webhook deleted or disabled meanwhile). */
  shouldRetry?: () => boolean;
  /** Aborts waiting between attempts (shutdown). */
  signal?: AbortSignal;
}

/** Runs `send` until success, a final failure, or the retries run out. Returns the last result. */
export async function withRetries(
  send: () => Promise<AttemptResult>,
  delaysMs: readonly number[],
  hooks: RetryHooks = {},
): Promise<{ result: AttemptResult; attempts: number }> {
  let attempts = 0;
  for (;;) {
    const result = await send();
    attempts += 1;
    hooks.onAttempt?.(result, attempts);
    const delay = delaysMs[attempts - 1];
    if (result.ok || !result.retryable || delay === undefined) return { result, attempts };
    try {
      await sleep(delay, undefined, { signal: hooks.signal });
    } catch {
      return { result, attempts }; // shutdown during the wait
    }
    if (hooks.shouldRetry && !hooks.shouldRetry()) return { result, attempts };
  }
}
