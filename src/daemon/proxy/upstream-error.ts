import { FastResponse } from 'srvx';
import { RouterError } from '../http/errors.js';
import { extractUpstreamError, formatProviderError } from '../routing/provider-error.js';
import { retryHintSeconds } from '../routing/retry-after.js';
import type { WireFormat } from '../translate/ir.js';

/** A failed attempt at one target, with what failover needs to decide. */
export class AttemptError extends Error {
  constructor(
    message: string,
    readonly status: number,
    readonly kind: 'http' | 'network' | 'timeout' | 'empty' | 'content_filter' | 'invalid',
    /** The upstream reply to pass through unchanged when client and upstream speak the same format. */
    readonly raw?: { body: string; contentType: string; headers: Record<string, string> },
  ) {
    super(message);
    this.name = 'AttemptError';
  }

  /**
   * Worth trying the next target: network, timeout, 408/429/5xx, auth failures, empty or filtered replies,
   * and replies that are not the format they claim (a broken upstream, not a broken request).
   */
  get retryable(): boolean {
    if (this.kind !== 'http') return true;
    return this.status === 408 || this.status === 429 || this.status >= 500 || this.status === 401 || this.status === 403;
  }
}

/** Builds the AttemptError for an upstream HTTP error reply. */
export function httpAttemptError(status: number, bodyText: string, headers: Record<string, string | string[] | undefined>): AttemptError {
  const info = extractUpstreamError(status, bodyText);
  const pass: Record<string, string> = {};
  const retryAfter = headers['retry-after'];
  if (typeof retryAfter === 'string') pass['retry-after'] = retryAfter;
  const contentType = typeof headers['content-type'] === 'string' ? headers['content-type'] : 'application/json';
  return new AttemptError(formatProviderError(info.code ?? status, info.message), status, 'http', { body: bodyText, contentType, headers: pass });
}

/** Builds the AttemptError for a network failure or abort. */
export function networkAttemptError(err: unknown, timedOut: boolean): AttemptError {
  if (timedOut) return new AttemptError(formatProviderError('TIMEOUT', 'The upstream did not answer in time.'), 504, 'timeout');
  const code = (err as { code?: string }).code;
  return new AttemptError(formatProviderError(code, `The upstream could not be reached (${(err as Error).message}).`), 502, 'network');
}

/**
 * The error the client sees for a failed attempt. Same format: the provider's own reply, byte for byte,
 * so the client's SDK reads it as it would from the provider. Otherwise the standard body, with the
 * provider's message formatted `[<code>]: <message>`.
 */
export function attemptErrorResponse(err: AttemptError, clientFormat: WireFormat, upstreamFormat: string, version: string): Response | RouterError {
  if (err.raw && clientFormat === upstreamFormat && err.status >= 400) {
    const headers = new Headers(err.raw.headers);
    headers.set('content-type', err.raw.contentType);
    headers.set('x-router-version', version);
    return new FastResponse(err.raw.body, { status: err.status, headers });
  }
  const extraHeaders: Record<string, string> = {};
  if (err.raw?.headers['retry-after']) {
    extraHeaders['Retry-After'] = String(retryHintSeconds({ headers: err.raw.headers }, Date.now()));
  }
  return new RouterError(err.status >= 400 ? err.status : 502, err.message, { headers: extraHeaders });
}
