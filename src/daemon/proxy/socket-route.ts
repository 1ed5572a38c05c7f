import { outboundDispatcher } from '../net/outbound-proxy.js';
import type { PipelineDeps } from './deps.js';
import type { UpstreamWireFormat } from '../translate/codec.js';
import { joinUrl, type Target } from '../providers/target.js';
import { SocketPool, UpstreamSocket } from './upstream-socket.js';

/** A Responses request that follows one served on the same client socket (ResponsesSession). */
export interface ResponseChain {
  /** The response it continues, as the client named it (`previous_response_id`). */
  previousResponseId: string;
  /** Its own new input items only (the session sends the whole conversation otherwise). */
  input: unknown[];
}

/** What decides the transport of one chat attempt. */
export interface SocketCall {
  transport?: 'websocket';
  /** The upstream sockets of the client's Responses WebSocket (absent for HTTP clients). */
  upstreamSockets?: SocketPool;
  chain?: ResponseChain;
}

/** Handshake headers: the request's own minus those of an HTTP body. */
const HTTP_ONLY = new Set(['content-type', 'accept', 'accept-encoding', 'content-length']);

/**
 * The upstream socket an attempt goes over, and the body to send on it, or undefined for HTTP. A streamed
 * (or reassembled) Responses call to a provider with the transport (ProviderDef.responsesWebSocket), as the
 * `responsesUpstreamWebSocket` setting allows; never through an outbound proxy (those are HTTP dispatchers:
 * such a connection stays on HTTP). A client socket's pool keeps one socket per account for the responses
 * that follow; a follow-up of a response the same upstream socket served is sent as `previous_response_id`
 * plus its new items, as Codex does, since the provider keeps the conversation on the socket.
 */
export function socketRoute(
  services: PipelineDeps,
  call: SocketCall,
  target: Target,
  format: UpstreamWireFormat,
  streamUp: boolean,
  native: boolean,
  headers: Record<string, string>,
  body: string,
): { socket: UpstreamSocket; body: string } | undefined {
  const spec = target.provider.responsesWebSocket;
  if (!spec || format !== 'openai-responses' || !streamUp) return undefined;
  const mode = services.settings.get().responsesUpstreamWebSocket;
  if (mode === 'never' || (mode === 'auto' && call.transport !== 'websocket')) return undefined;
  const httpUrl = joinUrl(target.baseUrl, spec.path);
  if (outboundDispatcher(new URL(httpUrl).origin, target)) return undefined;
  const url = httpUrl.replace(/^http/, 'ws');
  const own: Record<string, string> = {};
  for (const k in headers) if (!HTTP_ONLY.has(k.toLowerCase())) own[k] = headers[k]!;
  Object.assign(own, spec.headers);
  const pool = call.upstreamSockets;
  if (!pool) return { socket: new UpstreamSocket(url, own, true), body };
  const key = `${target.connectionId ?? target.provider.id}\u0000${url}`;
  const chain = call.chain;
  let sent = body;
  if (chain && native && pool.peek(key)?.served.has(chain.previousResponseId)) {
    const parsed = JSON.parse(body) as Record<string, unknown>;
    parsed.previous_response_id = chain.previousResponseId;
    parsed.input = chain.input;
    sent = JSON.stringify(parsed);
  }
  return { socket: pool.take(key, url, own), body: sent };
}
