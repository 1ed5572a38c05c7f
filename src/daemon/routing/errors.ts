/**
 * The client-facing errors the routing layer produces, with the exact bodies and headers the spec
 * requires. They are `RouterError`s, so the shared formatter adds the standard `type`/`code` fields.
 */
import { RouterError } from '../http/errors.js';
import { humanizeSeconds } from './retry-after.js';

/**
 * The 503 sent when a provider's circuit is open: body
 * `{error:{message, type:'server_error', code:'provider_circuit_open', provider, retry_after}}` with
 * headers `Retry-After` and `X-Service-Provider-Breaker: open`. With `model`, it is that model's circuit
 * (opened by its 5xx replies) and the message says so; the body shape is the same.
 */
export function circuitOpenError(provider: string, retryAfterSeconds: number, model?: string): RouterError {
  const seconds = Math.max(1, Math.ceil(retryAfterSeconds));
  const what = model === undefined ? `Provider ${provider} is` : `Model ${model} of provider ${provider} is`;
  return new RouterError(503, `${what} temporarily unavailable (circuit open); retry after ${seconds}s.`, {
    code: 'provider_circuit_open',
    type: 'server_error',
    extra: { provider, retry_after: seconds },
    headers: { 'Retry-After': String(seconds), 'X-Service-Provider-Breaker': 'open' },
  });
}

/**
 * The 429 sent when every credential for a model is cooling down: body
 * `{error:{message, type:'rate_limit_error', code:'model_cooldown', model, reset_seconds}}` (model only
 * when known) and a `Retry-After` header.
 */
export function modelCooldownError(model: string | undefined, resetSeconds: number): RouterError {
  const seconds = Math.max(1, Math.ceil(resetSeconds));
  const subject = model ? `model ${model}` : 'this model';
  const extra: Record<string, unknown> = model ? { model, reset_seconds: seconds } : { reset_seconds: seconds };
  return new RouterError(429, `All credentials for ${subject} are cooling down (retry after ${humanizeSeconds(seconds)}).`, {
    code: 'model_cooldown',
    type: 'rate_limit_error',
    extra,
    headers: { 'Retry-After': String(seconds) },
  });
}

/**
 * The error sent when every account failed: the upstream status passed through (a non-error status
 * becomes 502), the message with `(retry after 2m 5s)` appended and a `Retry-After` header when the
 * wait is known.
 */
export function allUnavailableError(status: number, message: string, retrySeconds?: number): RouterError {
  const passStatus = Number.isInteger(status) && status >= 400 && status <= 599 ? status : 502;
  if (retrySeconds === undefined || !Number.isFinite(retrySeconds)) return new RouterError(passStatus, message);
  const seconds = Math.max(1, Math.ceil(retrySeconds));
  return new RouterError(passStatus, `${message} (retry after ${humanizeSeconds(seconds)})`, {
    headers: { 'Retry-After': String(seconds) },
  });
}

/** A failed upstream attempt as far as its client error needs it (proxy/upstream-error.ts builds them). */
export interface RefusedAttempt {
  status: number;
  message: string;
  failure: { kind: string };
  /** Who answered: the provider as people read it and the connection's name. */
  origin?: { provider: string; connection?: string };
}

/**
 * An upstream refusing the connection's credential (401/403) is router's configuration problem, not the
 * client's key: a 502 `upstream_auth_failed` naming the provider and the connection, never the provider's
 * 401 passed through (every SDK reads a 401 as "your API key is wrong"). The provider's message (secrets
 * already masked) follows the colon. Undefined for any other failure.
 */
export function upstreamAuthError(err: RefusedAttempt): RouterError | undefined {
  if (err.failure.kind !== 'auth') return undefined;
  const o = err.origin;
  const who = o ? `upstream ${o.provider}${o.connection === undefined ? '' : ` (connection '${o.connection}')`}` : 'the upstream';
  return new RouterError(502, `${who} rejected its credential: ${err.message}`, {
    code: 'upstream_auth_failed',
    type: 'upstream_error',
    extra: { upstream_status: err.status, ...(o ? { provider: o.provider } : {}) },
  });
}
