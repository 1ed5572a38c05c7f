import type { ServerResponse } from 'node:http';
import { randomUUID } from 'node:crypto';
import type { RouteContext } from '../http/routes.js';
import type { PipelineDeps } from './deps.js';
import { sessionHeader } from '../routing/conversation.js';
import type { ExecRequest } from './execute.js';
import type { ProxyCall } from './outcome.js';

/**
 * The request envelope: who asks for what, built once per client request from its route context (trace
 * id, start time, session, traceparent, the client headers the request log keeps), for every endpoint
 * (chat, count_tokens, every family of families/).
 */
export function requestEnvelope(
  ctx: { services: PipelineDeps; auth: RouteContext['auth']; event: { req: { headers: Headers } } },
  call: ProxyCall,
  options: { t0?: number; traceId?: string; conversation?: boolean; relay?: boolean } = {},
): ExecRequest {
  const h = ctx.event.req.headers;
  return {
    services: ctx.services,
    auth: ctx.auth,
    call,
    traceId: options.traceId ?? randomUUID(),
    t0: options.t0 ?? performance.now(),
    sessionKey: sessionHeader(h),
    // Read for a conversation's markers under a combo's cache affinity (chat-like calls).
    requestHeaders: options.conversation ? h : undefined,
    traceparent: h.get('traceparent'),
    relay: options.relay,
    client: { userAgent: h.get('user-agent'), forwardedFor: h.get('x-forwarded-for') },
  };
}

/** The client's Node response, when served by node:http (absent for in-process `app.request` calls). */
export function nodeSink(ctx: Pick<RouteContext, 'event'>): ServerResponse | undefined {
  return ctx.event.req.runtime?.node?.res as ServerResponse | undefined;
}
