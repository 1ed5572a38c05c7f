import type { ServerResponse } from 'node:http';
import type { Target } from '../providers/target.js';
import { credentialSecrets, requestHeaders, withRequestHeaders } from '../providers/target.js';
import { httpAttemptError, networkAttemptError } from './upstream-error.js';
import { UpstreamExchange, type UpstreamHeaders } from '../net/upstream.js';
import { AttemptGuard, type AttemptLimits } from './attempt-guard.js';

/** A successful JSON reply of one attempt. */
export interface JsonReply {
  text: string;
  headers: UpstreamHeaders;
  /** Time from sending to the end of the reply, ms. */
  upstreamMs: number;
}

/**
 * One non-streamed JSON POST to a target, for the executor's attempt functions: the target's headers, the
 * attempt's limits (first byte, then the whole attempt: an abort), and every failure as an AttemptError
 * (network, timeout, or the HTTP error with the target's credential masked).
 */
export async function postJson(
  target: Target,
  url: string,
  body: string | Uint8Array,
  limits: AttemptLimits,
  options: { maxBytes?: number; headers?: Record<string, string>; sink?: ServerResponse } = {},
): Promise<JsonReply> {
  const tSend = performance.now();
  const headers = withRequestHeaders(requestHeaders(target, false), options.headers);
  const { exchange, response } = UpstreamExchange.send({ url, headers, body, route: target });
  // The client's response, when there is one: its leaving ends the attempt at once.
  const guard = new AttemptGuard(exchange, options.sink, limits);
  try {
    const reply = await response.catch((err) => {
      throw guard.cause() ?? networkAttemptError(err, false, url);
    });
    guard.firstByte();
    if (reply.statusCode >= 400) {
      // The first MiB of an error body is plenty to report it; the rest is not read.
      const text = await reply.textUpTo(1024 * 1024);
      throw guard.cause() ?? httpAttemptError(reply.statusCode, text, reply.headers, credentialSecrets(target));
    }
    const text = await reply.text(options.maxBytes).catch((err) => {
      throw guard.cause() ?? networkAttemptError(err, false, url);
    });
    return { text, headers: reply.headers, upstreamMs: performance.now() - tSend };
  } finally {
    guard.dispose();
  }
}
