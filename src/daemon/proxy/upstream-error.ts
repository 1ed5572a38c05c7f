import { FastResponse } from 'srvx';
import { RouterError, publicErrorClass } from '../http/errors.js';
import { upstreamAuthError } from '../routing/errors.js';
import { classifyFailure, extractUpstreamError, formatProviderError, type ClassifiedFailure } from '../routing/provider-error.js';
import { parseRetryHintFromText, retryHintSeconds, tryParseRetryAfter } from '../routing/retry-after.js';
import { exhaustedSeconds, isLimitHeader } from '../routing/account-limits.js';
import type { WireFormat } from '../translate/ir.js';
import { getUpstreamCodec } from '../translate/registry.js';
import { redactSecrets } from '../../shared/mask.js';
import { networkFailureText } from '../net/probe.js';

/** The kinds of failed attempt the proxy builds. */
export type AttemptKind = 'http' | 'network' | 'timeout' | 'empty' | 'content_filter' | 'invalid' | 'client_gone' | 'hedge_lost';

/**
 * A failed attempt at one target. What the failure means is decided once, here, when it is built
 * (`failure`: kind, retry elsewhere, which circuit it counts against, how long it cools the account,
 * whether it may confirm an auth failure); failover, breakers, cooldowns and auth checks only read it.
 */
export class AttemptError extends Error {
  readonly failure: ClassifiedFailure;
  /** Who answered: the provider as people read it and the connection's name (set when the attempt failed). */
  origin?: { provider: string; connection?: string };

  constructor(
    message: string,
    readonly status: number,
    readonly kind: AttemptKind,
    /** The upstream reply to pass through unchanged when client and upstream speak the same format. */
    readonly raw?: { body: string; contentType: string; headers: Record<string, string> },
    /** The provider's error code or type, when its body named one. */
    code?: string,
    /** The provider's own message (without the `[code]:` prefix), read for quota and model-access wording. */
    upstreamMessage?: string,
  ) {
    super(message);
    this.name = 'AttemptError';
    this.failure = classifyAttempt(kind, status, raw, code, upstreamMessage);
  }
}
// Its messages are written for people (the upstream's own message, secrets masked): they may reach clients.
publicErrorClass(AttemptError);

/**
 * How long an account out of quota or credit is left alone when the reply gives no reset time: long enough
 * that a pool stops trying it on every request, short enough that a topped-up account comes back soon.
 */
export const QUOTA_COOLDOWN_SECONDS = 300;

/**
 * Classifies a failed attempt once (see {@link classifyFailure}); 429s, hinted 5xx and quota replies also
 * get their cooldown (a quota reply's is account-wide: see `scope`).
 */
function classifyAttempt(kind: AttemptKind, status: number, raw: AttemptError['raw'], code: string | undefined, message: string | undefined): ClassifiedFailure {
  // The client left: not the upstream's failure, and nobody is waiting for another target.
  if (kind === 'client_gone') return { kind: 'client', scope: 'request', status, retryable: false, breakerEligible: false, authConfirmable: false };
  // Router cancelled it: another target of a hedged request answered first. Says nothing of this provider.
  if (kind === 'hedge_lost') return { kind: 'client', scope: 'request', status, retryable: false, breakerEligible: false, authConfirmable: false };
  const failure = classifyFailure({
    status: kind === 'http' || kind === 'invalid' ? status : undefined,
    error: kind === 'timeout' ? TIMEOUT : undefined,
    code,
    message,
    emptyStream: kind === 'empty',
    contentFiltered: kind === 'content_filter',
  });
  if (kind !== 'http') return failure;
  // 429 always cools the account down (fallback 1 s); a 5xx only when the upstream says how long to wait:
  // transient 5xx streaks are the breaker's job, and cooling the only account on each would turn one
  // server hiccup into a client-visible outage.
  const now = Date.now();
  const hinted = raw !== undefined && (tryParseRetryAfter(raw.headers['retry-after'], now) !== undefined || parseRetryHintFromText(raw.body) !== undefined);
  if (failure.kind === 'quota') failure.coolSeconds = hinted ? retryHintSeconds({ headers: raw?.headers, bodyText: raw?.body }, now) : QUOTA_COOLDOWN_SECONDS;
  else if (status === 429 || (status >= 500 && hinted)) failure.coolSeconds = retryHintSeconds({ headers: raw?.headers, bodyText: raw?.body }, now);
  // A 429 whose rate-limit headers say one of the account's limits is used up until a reset (OpenAI
  // x-ratelimit-remaining-* 0, Anthropic anthropic-ratelimit-*-remaining 0 or unified status rejected, Codex
  // used-percent 100): the whole account waits until then, every model (account-limits.ts).
  if (status === 429 && raw !== undefined && failure.scope !== 'request') {
    const until = exhaustedSeconds(raw.headers, now);
    if (until !== undefined) {
      failure.scope = 'account';
      failure.coolSeconds = Math.max(failure.coolSeconds ?? 0, until);
    }
  }
  return failure;
}

const TIMEOUT = Object.assign(new Error('timeout'), { name: 'TimeoutError' });

/**
 * Builds the AttemptError for an upstream HTTP error reply. Upstreams quote a refused key in their error
 * text: the target's `secrets` are masked here, so no later reader (client reply, usage row, log) sees them.
 */
export function httpAttemptError(
  status: number,
  rawText: string,
  headers: Record<string, string | string[] | undefined>,
  secrets: readonly string[] = [],
): AttemptError {
  const bodyText = secrets.length ? redactSecrets(rawText, secrets) : rawText;
  const info = extractUpstreamError(status, bodyText);
  const pass: Record<string, string> = {};
  const retryAfter = headers['retry-after'];
  if (typeof retryAfter === 'string') pass['retry-after'] = retryAfter;
  // Rate-limit headers say whether an account-wide limit is used up (classifyAttempt).
  for (const name in headers) {
    const v = headers[name];
    if (isLimitHeader(name) && v !== undefined) pass[name] = Array.isArray(v) ? v[0]! : v;
  }
  const contentType = typeof headers['content-type'] === 'string' ? headers['content-type'] : 'application/json';
  return new AttemptError(formatProviderError(info.code ?? status, info.message), status, 'http', { body: bodyText, contentType, headers: pass }, info.code, info.message);
}

/**
 * Builds the AttemptError for a network failure or abort. `url` is what was called: the message names its
 * host and what went wrong ("127.0.0.1:1 refused the connection"), never the raw exception text.
 */
export function networkAttemptError(err: unknown, timedOut: boolean, url?: string): AttemptError {
  if (timedOut) return new AttemptError(formatProviderError('TIMEOUT', 'The upstream did not answer in time.'), 504, 'timeout');
  const code = (err as { code?: string } | undefined)?.code;
  // A whole read past the reply cap (net/upstream.ts, ReplyTooLargeError): the upstream answered, too much.
  if (code === 'ROUTER_REPLY_TOO_LARGE') return new AttemptError(`The upstream reply exceeds ${(err as { limitText?: string }).limitText}, the most one reply may have.`, 502, 'invalid');
  // A status line outside 100-599 (net/upstream.ts, InvalidStatusError): not HTTP a client could be given.
  if (code === 'ROUTER_INVALID_STATUS') return new AttemptError((err as Error).message, 502, 'invalid');
  return new AttemptError(formatProviderError(code, `The upstream could not be reached: ${networkFailureText(err, url ?? '')}.`), 502, 'network');
}

/**
 * Whether an upstream error body has its format's error shape, so that passing it through byte for byte
 * serves the client's SDK: OpenAI-style `{error: {message}}`, Anthropic `{type: 'error', error: {type,
 * message}}`, Gemini `{error: {code, message, status}}` (also wrapped in an array). An HTML error page, a
 * truncated body or any other JSON is not.
 */
export function inErrorShape(format: WireFormat, body: string): boolean {
  const start = body.trimStart()[0];
  if (start !== '{' && start !== '[') return false;
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return false;
  }
  return getUpstreamCodec(format).readError(parsed) !== undefined;
}

/**
 * The error the client sees for a failed attempt. Same format and in that format's error shape: the
 * provider's own reply, byte for byte, so the client's SDK reads it as it would from the provider.
 * Otherwise (another format, an HTML error page, a cut body) the standard body, with the provider's
 * message formatted `[<code>]: <message>`.
 */
export function attemptErrorResponse(err: AttemptError, clientFormat: WireFormat, upstreamFormat: string, version: string, traceId: string): Response | RouterError {
  const refused = err.kind === 'http' ? upstreamAuthError(err) : undefined;
  if (refused) return refused;
  const retryAfter = clientRetryAfter(err);
  if (err.raw && clientFormat === upstreamFormat && err.status >= 400 && inErrorShape(clientFormat, err.raw.body)) {
    const headers = new Headers();
    headers.set('content-type', err.raw.contentType);
    headers.set('x-router-version', version);
    headers.set('x-router-trace-id', traceId);
    if (retryAfter !== undefined) headers.set('retry-after', String(retryAfter));
    return new FastResponse(withMessage(err.raw.body, err.message), { status: err.status, headers });
  }
  const extraHeaders: Record<string, string> = {};
  if (retryAfter !== undefined) extraHeaders['Retry-After'] = String(retryAfter);
  return new RouterError(err.status >= 400 ? err.status : 502, err.message, { headers: extraHeaders });
}

/**
 * The `Retry-After` the client gets, in whole seconds (spec "Errors": Retry-After in whole seconds; hints from the header, `reset after`, `retry after`; 24 h cap): the upstream's header
 * (seconds, epoch or date) or a hint in its error text, capped at 24 hours, at least 1; a 429 or 503
 * without any hint gets the 1 second fallback. Other failures get none unless the upstream gave a wait.
 */
export function clientRetryAfter(err: AttemptError): number | undefined {
  if (err.kind !== 'http') return undefined;
  const headers = err.raw?.headers;
  const body = err.raw?.body;
  const hinted = tryParseRetryAfter(headers?.['retry-after'], Date.now()) !== undefined || parseRetryHintFromText(body) !== undefined;
  if (!hinted && err.status !== 429 && err.status !== 503) return undefined;
  return retryHintSeconds({ headers, bodyText: body }, Date.now());
}

/**
 * The provider's error body with its message formatted `[<code>]: <message>` (spec "Errors": provider messages read `[<code>]: <message>`),
 * everything else of the error object (type, code, param, status, details) left as the SDKs read it.
 */
function withMessage(body: string, message: string): string {
  try {
    const parsed = JSON.parse(body) as unknown;
    const root = Array.isArray(parsed) ? parsed[0] : parsed;
    const error = (root as { error?: { message?: unknown } }).error;
    if (!error || typeof error !== 'object') return body;
    error.message = message;
    return JSON.stringify(parsed);
  } catch {
    return body;
  }
}
