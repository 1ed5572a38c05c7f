import type { IncomingMessage, ServerResponse } from 'node:http';
import { composeMiddleware, H3Event, toResponse, type H3 } from 'h3';
import { NodeRequest, sendNodeResponse } from 'srvx/node';
import type { Services } from '../services.js';
import { HANDLED, wrap } from './app.js';
import type { RouteDef } from './routes.js';

type NodeListener = (req: IncomingMessage, res: ServerResponse) => void;
type EventHandler = (event: H3Event) => unknown;

/** A literal route path: no parameters, wildcards, encoded bytes, empty or dot segments. */
const LITERAL_PATH_RE = /^(?:\/(?!\.\.?(?:\/|$))[A-Za-z0-9_.~-]+)+$/;

/**
 * Routes served by the fast path: the client-tier (proxy) POST routes at a literal path. They are the hot
 * ones, and they write their reply straight to the Node response, so srvx and h3 add nothing on the way.
 */
export function isFastRoute(def: RouteDef): boolean {
  return def.method === 'POST' && def.tier === 'client' && LITERAL_PATH_RE.test(def.path);
}

/**
 * The Node request listener of the daemon: a POST whose request target is exactly the path of a fast route
 * (no query string, no trailing slash) is served here, everything else by `fallback` (srvx + the h3 app).
 *
 * Same behaviour as through h3: the route's handler is the same `wrap(def)` (authorization tier, body limit,
 * error body), it runs inside the app's middleware (the cache directive scope), the event is an h3 event
 * over srvx's `NodeRequest` (the request object h3 sees on Node; see LazyUrlEvent), and a reply other than HANDLED goes
 * through h3's `toResponse` and srvx's `sendNodeResponse`. What it skips: srvx's fetch adaptation, h3's
 * router, and for HANDLED the empty Response that h3 and srvx build and send to end a reply already sent.
 */
export function fastPathListener(app: H3, services: Services, fallback: NodeListener, waitUntil?: (p: Promise<unknown>) => void): NodeListener {
  // Hooks run around every request in h3; with one configured, keep everything on the h3 path.
  if (app.config.onRequest || app.config.onResponse) return fallback;
  // h3's route and middleware lists are internal fields: if a future h3 renames them, serve everything
  // through h3 rather than fail (the lockfile pins the version this was written against).
  const known = app['~routes'] as unknown;
  const layers = app['~middleware'] as unknown;
  if (!Array.isArray(known) || !Array.isArray(layers)) return fallback;
  const routes = new Map<string, { handler: EventHandler; data: unknown }>();
  for (const def of services.routeTable) {
    if (!isFastRoute(def)) continue;
    // What h3 stores as `event.context.matchedRoute` for this route.
    const data = app['~routes'].find((r) => r.method === def.method && r.route === def.path);
    if (!data) continue;
    routes.set(def.path, { handler: wrap(def, services), data });
  }
  if (routes.size === 0) return fallback;
  // The app's middleware, composed as h3 composes it. Taken once: the daemon adds its middleware in
  // buildApp, before it listens (a `use` after this point would reach only the h3 path).
  const middleware = composeMiddleware(app['~middleware']);

  return function routerListener(req, res) {
    const route = req.method === 'POST' ? routes.get(req.url!) : undefined;
    if (!route) return fallback(req, res);
    const event = createEvent(app, req, res, waitUntil);
    event.context.params = undefined;
    event.context.matchedRoute = route.data as never;
    let result: unknown;
    try {
      result = middleware(event, route.handler);
    } catch (error) {
      result = Promise.reject(error);
    }
    if (typeof (result as Promise<unknown>)?.then === 'function') {
      (result as Promise<unknown>).then(
        (value) => finish(app, event, res, value),
        (error) => finish(app, event, res, Promise.reject(error)),
      );
    } else finish(app, event, res, result);
  };
}

type NodeRequestInstance = Request & { waitUntil?: (p: Promise<unknown>) => void; context?: object; _url: URL };

/**
 * The event h3 builds for a request from srvx's Node request (`new H3Event(new NodeRequest(...))`), with
 * one difference: `url` is made on first use instead of up front (the proxy routes never read it). For a
 * request target that is a literal path, as on the fast path, H3Event's url is the request's own `_url`
 * (nothing to decode or canonicalize), which is what the getter returns. An H3Event by prototype.
 */
class LazyUrlEvent {
  app: H3;
  req: NodeRequestInstance;
  context: Record<string, unknown>;
  #url: URL | undefined;
  constructor(request: NodeRequestInstance, app: H3) {
    this.context = request.context = Object.create(null) as Record<string, unknown>;
    this.req = request;
    this.app = app;
  }
  get url(): URL {
    return (this.#url ??= this.req._url);
  }
  set url(value: URL) {
    this.#url = value;
  }
}
Object.setPrototypeOf(LazyUrlEvent.prototype, H3Event.prototype);

/** The h3 event of a fast-path request (see LazyUrlEvent). */
export function createEvent(app: H3, req: IncomingMessage, res: ServerResponse, waitUntil?: (p: Promise<unknown>) => void): H3Event {
  const request = new NodeRequest({ req, res }) as unknown as NodeRequestInstance;
  request.waitUntil = waitUntil;
  return new LazyUrlEvent(request, app) as unknown as H3Event;
}

/** Sends what the handler returned, as h3 (`toResponse`) and srvx (`sendNodeResponse`) would. */
function finish(app: H3, event: H3Event, res: ServerResponse, value: unknown): void {
  if (value === HANDLED) {
    // h3 turns HANDLED into an empty 200 Response; srvx writes its head unless one was sent, then ends.
    if (!res.headersSent) res.writeHead(200, '', []);
    res.end();
    return;
  }
  let response: Response | Promise<Response>;
  try {
    response = toResponse(value, event, app.config) as Response | Promise<Response>;
  } catch {
    return fail(res);
  }
  if (response instanceof Promise) response.then((r) => send(res, r), () => fail(res));
  else send(res, response);
}

function send(res: ServerResponse, response: Response): void {
  sendNodeResponse(res, response).catch(() => fail(res));
}

/** srvx's last resort when a reply cannot be sent: a bare 500, or a cut connection once the head is out. */
function fail(res: ServerResponse): void {
  if (res.writableEnded) return;
  if (res.headersSent) res.destroy();
  else {
    res.statusCode = 500;
    res.statusMessage = '';
    res.end();
  }
}
