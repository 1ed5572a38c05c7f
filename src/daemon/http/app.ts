import { randomUUID } from 'node:crypto';
import { H3, type H3Event } from 'h3';
import { FastResponse } from 'srvx';
import { HEADER } from '../../shared/headers.js';
import { authorize } from '../auth/pipeline.js';
import type { Services } from '../services.js';
import { readJsonBody, validate } from './body.js';
import { guardRequest } from './request-guard.js';
import { clientErrorBody, isRoutePath, RouterError, toErrorReply } from './errors.js';
import type { WireFormat } from '../translate/ir.js';
import type { RouteDef } from './routes.js';
import { maskUrlsIn } from '../../shared/mask-url.js';

/**
 * h3's marker for "the handler sent the reply itself" (its `kHandled`, a registered symbol): h3 and srvx
 * then leave the Node response alone. The proxy routes use it to write replies straight to the socket.
 */
export const HANDLED: unique symbol = Symbol.for('h3.handled') as typeof HANDLED;

/**
 * The error formatter's HTTP face: one place turns anything thrown into the standard body, in the client
 * format's own error shape on the routes that speak one (`format`, RouteDef.errorFormat).
 */
export function errorResponse(error: unknown, services: Pick<Services, 'log' | 'version'>, format?: WireFormat): Response {
  const reply = toErrorReply(error);
  if (reply.status === 507) services.log.error('disk full', { error: (error as Error).message });
  else if (reply.status === 499) services.log.info(reply.body.error.message);
  else if (reply.body.error.code === 'database_unavailable') {
    const cause = (error as Error).cause;
    services.log.warn('refused: the database is unavailable', { error: maskUrlsIn(cause instanceof Error ? cause.message : String(cause)) });
  }
  else if (reply.status >= 500 && !(error instanceof RouterError)) {
    services.log.error('unhandled error', { error: error instanceof Error ? (error.stack ?? error.message) : String(error) });
  }
  const headers = new Headers(reply.headers);
  headers.set('content-type', 'application/json; charset=utf-8');
  headers.set(HEADER.version, services.version);
  // Router's own refusals are traceable too: the proxy pipeline names its request's trace id on the error.
  if (!headers.has(HEADER.traceId)) headers.set(HEADER.traceId, randomUUID());
  const body = format ? clientErrorBody(format, reply.status, reply.body) : reply.body;
  return new FastResponse(JSON.stringify(body), { status: reply.status, headers });
}

/** A refused client-route request goes into the traffic capture (when on) with the reply it got. */
function captureRefusal(event: H3Event, services: Services, reply: Response): Promise<void> | void {
  if (!services.settings.get().captureTraffic) return;
  return reply
    .clone()
    .text()
    .then((text) =>
      services.capture.rejected(reply.headers.get(HEADER.traceId)!, event.req.headers, event.context.clientBody, reply.status, reply.headers, text),
    );
}

/** Body limit for a route: client (proxy) routes carry prompts and images; everything else is small. */
export function bodyLimitFor(def: RouteDef, services: Services): number {
  if (def.bodyLimit !== undefined) return def.bodyLimit;
  const s = services.settings.get();
  return def.tier === 'client' ? s.maxRequestBodyBytes : s.maxManagementBodyBytes;
}

/**
 * Wraps a route: refuse what a web page could forge (request-guard.ts), authorize, enforce the body limit, parse and validate, run, format errors. The h3 app and
 * the Node fast path (fast-path.ts) both serve routes through this, so no route can skip the pipeline.
 */
export function wrap(def: RouteDef, services: Services) {
  return async function routeHandler(event: H3Event): Promise<unknown> {
    try {
      guardRequest(event, services, def.bodyTypes, def.bodylessWithKey, def.sideEffects);
      const auth = authorize(def.tier, event, services);
      const limit = bodyLimitFor(def, services);
      const declared = event.req.headers.get('content-length');
      if (declared !== null && Number(declared) > limit) {
        throw new RouterError(413, `Request body exceeds the limit of ${limit} bytes.`);
      }
      const body = def.body ? validate(def.body, await readJsonBody(event, limit), 'body') : undefined;
      const query = def.query ? validate(def.query, Object.fromEntries(event.url.searchParams), 'query') : undefined;
      const params = (event.context.params ?? {}) as Record<string, string>;
      const result = await def.handler({ event, services, auth, params, body, query });
      // Handlers that build a Response set the version header themselves; leaving event.res untouched lets
      // h3 send that Response as is instead of copying it into a new one (a measurable cost per request).
      if (result !== HANDLED && !(result instanceof Response)) {
        event.res.headers.set(HEADER.version, services.version);
        event.res.headers.set(HEADER.traceId, randomUUID());
      }
      return result;
    } catch (error) {
      const reply = errorResponse(error, services, def.errorFormat);
      if (def.tier === 'client') await captureRefusal(event, services, reply);
      return reply;
    }
  };
}

/**
 * Assembles the h3 app from the route table. Every route goes through `wrap`, so none can skip the
 * authorization pipeline; registering the same method and path twice is a programming error and throws.
 */
export function createApp(routes: readonly RouteDef[], services: Services): H3 {
  const app = new H3({
    onError(error, event) {
      // Reached for errors outside routes: unknown path (404), malformed URL (400). h3's 404 message quotes
      // the whole URL with host and query: name the method and path instead.
      if (!(error instanceof RouterError) && (error as { status?: unknown }).status === 404) {
        const path = event.url.pathname.slice(0, 200);
        const where = isRoutePath(path) ? path : 'on this path';
        return errorResponse(new RouterError(404, `No route matches ${event.req.method} ${where}.`), services);
      }
      return errorResponse(error, services);
    },
  });
  const seen = new Set<string>();
  for (const def of routes) {
    const id = `${def.method} ${def.path}`;
    if (seen.has(id)) throw new Error(`route registered twice: ${id}`);
    seen.add(id);
    // h3's router takes any method name; its type lists the standard ones (the vault adds WebDAV's).
    app.on(def.method as Parameters<H3['on']>[0], def.path, wrap(def, services), { meta: { tier: def.tier } });
  }
  return app;
}
