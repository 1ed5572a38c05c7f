import type { Target } from './target.js';
import { credentialSecrets, requestHeaders, withRequestHeaders } from './target.js';
import { httpAttemptError, networkAttemptError } from './upstream-error.js';
import { UpstreamExchange, type UpstreamHeaders } from './upstream.js';

/** A successful JSON reply of one attempt. */
export interface JsonReply {
  text: string;
  headers: UpstreamHeaders;
  /** Time from sending to the end of the reply, ms. */
  upstreamMs: number;
}

/**
 * One non-streamed JSON POST to a target, for the executor's attempt functions: the target's headers, the
 * per-target timeout (an abort), and every failure as an AttemptError (network, timeout, or the HTTP error
 * with the target's credential masked).
 */
export async function postJson(
  target: Target,
  url: string,
  body: string,
  timeoutMs: number,
  options: { maxBytes?: number; headers?: Record<string, string> } = {},
): Promise<JsonReply> {
  let timedOut = false;
  const tSend = performance.now();
  const headers = withRequestHeaders(requestHeaders(target, false), options.headers);
  const { exchange, response } = UpstreamExchange.send({ url, headers, body });
  const timer = Number.isFinite(timeoutMs)
    ? setTimeout(() => {
        timedOut = true;
        exchange.abort();
      }, timeoutMs)
    : undefined;
  try {
    const reply = await response.catch((err) => {
      throw networkAttemptError(err, timedOut);
    });
    if (reply.statusCode >= 400) {
      // The first MiB of an error body is plenty to report it; the rest is not read.
      const text = await reply.textUpTo(1024 * 1024);
      throw httpAttemptError(reply.statusCode, text, reply.headers, credentialSecrets(target));
    }
    const text = await reply.text(options.maxBytes).catch((err) => {
      throw networkAttemptError(err, timedOut);
    });
    return { text, headers: reply.headers, upstreamMs: performance.now() - tSend };
  } finally {
    clearTimeout(timer);
  }
}
