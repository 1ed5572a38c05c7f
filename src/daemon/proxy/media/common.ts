import type { ServerResponse } from 'node:http';
import { randomUUID } from 'node:crypto';
import { Readable } from 'node:stream';
import { sessionHeader } from '../../routing/conversation.js';
import { RouterError } from '../../http/errors.js';
import type { RouteContext } from '../../http/routes.js';
import type { ProviderEndpoints } from '../../providers/types.js';
import type { Services } from '../../services.js';
import { AttemptGuard, type AttemptLimits } from '../attempt-guard.js';
import type { ExecRequest } from '../execute.js';
import type { ProxyCall } from '../outcome.js';
import { credentialSecrets, targetHeaders, withRequestHeaders, type Target } from '../../providers/target.js';
import { attemptErrorResponse, httpAttemptError, networkAttemptError, type AttemptError } from '../upstream-error.js';
import { ReplyTooLargeError, UpstreamExchange } from '../../net/upstream.js';

/** A request for one media endpoint as the executor sees it. */
export interface MediaRequest {
  exec: ExecRequest;
  services: Services;
  traceId: string;
  t0: number;
  /** The client's Node response (its leaving ends the attempt). */
  sink?: ServerResponse;
}

/** The client's Node response, when served by node:http. */
export function nodeSink(ctx: RouteContext): ServerResponse | undefined {
  return ctx.event.req.runtime?.node?.res as ServerResponse | undefined;
}

/** Builds the executor request of a media call (`raw`: the JSON body, or a multipart body's text fields). */
export function mediaRequest(ctx: RouteContext, endpoint: string, model: string, raw: Record<string, unknown>, stream = false): MediaRequest {
  const t0 = performance.now();
  const traceId = randomUUID();
  const h = ctx.event.req.headers;
  const call: ProxyCall = { clientFormat: 'openai-chat', raw, model, stream, endpoint };
  return {
    exec: {
      services: ctx.services,
      auth: ctx.auth,
      call,
      traceId,
      t0,
      sessionKey: sessionHeader(h),
      traceparent: h.get('traceparent'),
      client: { userAgent: h.get('user-agent'), forwardedFor: h.get('x-forwarded-for') },
    },
    services: ctx.services,
    traceId,
    t0,
    sink: nodeSink(ctx),
  };
}

/**
 * Refuses a target whose provider does not serve the endpoint. The refusal is target-specific
 * (`endpoint_not_supported`): inside a combo the next target is tried.
 */
export function requireEndpoint(target: Target, endpoint: keyof ProviderEndpoints, what: string): void {
  if (!target.provider.endpoints?.[endpoint]) {
    throw new RouterError(400, `Provider '${target.provider.id}' has no ${what} endpoint (model '${target.publicModel}').`, {
      code: 'endpoint_not_supported',
      extra: { param: 'model' },
    });
  }
}

/** Response headers of a served media reply. */
export function replyHeaders(m: MediaRequest, contentType: string, upstreamMs: number): Record<string, string> {
  return {
    'content-type': contentType,
    'server-timing': `router;dur=${Math.max(0, performance.now() - m.t0 - upstreamMs).toFixed(2)}, upstream;dur=${upstreamMs.toFixed(2)}`,
    'x-router-version': m.services.version,
    'x-router-trace-id': m.traceId,
  };
}

/** The client's reply once every target failed: the provider's own OpenAI error body on an OpenAI-format target, else the standard body. */
export function failReply(m: MediaRequest, last: AttemptError, upstreamFormat: string): Response {
  const failure = attemptErrorResponse(last, 'openai-chat', upstreamFormat === 'gemini' ? 'gemini' : 'openai-chat', m.services.version, m.traceId);
  if (failure instanceof RouterError) throw failure;
  return failure;
}

/** An upstream reply whose headers arrived with a 2xx status; its body is still to be read. */
export interface OpenReply {
  exchange: UpstreamExchange;
  guard: AttemptGuard;
  tSend: number;
}

/**
 * Sends one request to a target (its credential and headers, the given content type) and waits for the
 * reply's headers. A non-2xx reply becomes the AttemptError the executor classifies (credential masked);
 * a network failure or timeout likewise. On success the caller owns `guard` and must dispose it once the
 * body is read (it keeps the total-time limit and the client-gone abort until then).
 */
export async function openUpstream(
  target: Target,
  url: string,
  body: string | Uint8Array,
  contentType: string,
  limits: AttemptLimits,
  sink: ServerResponse | undefined,
  accept = 'application/json',
): Promise<OpenReply> {
  const tSend = performance.now();
  const headers = withRequestHeaders(targetHeaders(target, accept), { 'content-type': contentType, 'accept-encoding': 'identity' });
  const { exchange, response } = UpstreamExchange.send({ url, headers, body, route: target });
  const guard = new AttemptGuard(exchange, sink, limits);
  try {
    const reply = await response.catch((err) => {
      throw guard.cause() ?? networkAttemptError(err, false, url);
    });
    guard.firstByte();
    if (reply.statusCode >= 300) {
      const text = await reply.textUpTo(1024 * 1024);
      throw guard.cause() ?? httpAttemptError(reply.statusCode, text, reply.headers, credentialSecrets(target));
    }
    return { exchange, guard, tSend };
  } catch (err) {
    guard.dispose();
    throw err;
  }
}

/** Reads a whole reply body as bytes (capped), then releases the guard. */
export async function readWhole(open: OpenReply, limit = 256 * 1024 * 1024): Promise<{ bytes: Buffer; upstreamMs: number }> {
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for (let c = await open.exchange.read(); c !== undefined; c = await open.exchange.read()) {
      size += c.length;
      if (size > limit) {
        open.exchange.abort();
        throw networkAttemptError(new ReplyTooLargeError(limit), false);
      }
      chunks.push(c);
    }
  } catch (err) {
    throw open.guard.cause() ?? (err instanceof Error && err.name === 'AttemptError' ? err : networkAttemptError(err, false));
  } finally {
    open.guard.dispose();
  }
  return { bytes: Buffer.concat(chunks, size), upstreamMs: performance.now() - open.tSend };
}

/** The upstream's content type, or a fallback. */
export function upstreamContentType(open: OpenReply, fallback: string): string {
  const v = open.exchange.headers['content-type'];
  return (Array.isArray(v) ? v[0] : v) ?? fallback;
}

/** Parses JSON, or undefined. */
export function tryJson(text: string): any {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** A non-negative finite number, or undefined. */
export function num(v: unknown): number | undefined {
  return typeof v === 'number' && Number.isFinite(v) && v >= 0 ? v : undefined;
}

/**
 * Forwards an upstream body to the client as it arrives (speech audio, SSE events): one chunk read per
 * chunk pushed, so nothing is buffered beyond the socket's own backpressure. `onEnd` runs once, with the
 * failure if the stream broke or the client left; the tail of the body (last 8 KiB) is handed to it for
 * usage that only the last event carries.
 */
export function passThrough(open: OpenReply, onEnd: (error: string | undefined, tail: string, bytes: number) => void): Readable {
  let ended = false;
  let tail = '';
  let bytes = 0;
  const end = (error?: string): void => {
    if (ended) return;
    ended = true;
    open.guard.dispose();
    onEnd(error, tail, bytes);
  };
  return new Readable({
    highWaterMark: 64 * 1024,
    read() {
      open.exchange.read().then(
        (chunk) => {
          if (chunk === undefined) {
            end();
            this.push(null);
            return;
          }
          bytes += chunk.length;
          tail = (tail + chunk.toString('latin1')).slice(-8192);
          this.push(chunk);
        },
        (err: Error) => {
          end(open.guard.cause()?.message ?? `The upstream stream broke: ${err.message}`);
          this.destroy(err);
        },
      );
    },
    destroy(err, cb) {
      if (!ended) {
        open.exchange.abort();
        end('The client closed the connection during the reply.');
      }
      cb(err);
    },
  });
}

/** The last SSE event of a given type in a stream's tail, parsed. */
export function lastEvent(tail: string, type: string): any {
  const lines = tail.split(/\r?\n/);
  for (let i = lines.length - 1; i >= 0; i--) {
    const line = lines[i]!;
    if (!line.startsWith('data:') || !line.includes(type)) continue;
    const ev = tryJson(Buffer.from(line.slice(5).trim(), 'latin1').toString('utf8'));
    if (ev?.type === type) return ev;
  }
  return undefined;
}
