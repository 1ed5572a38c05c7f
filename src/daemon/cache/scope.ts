import { AsyncLocalStorage } from 'node:async_hooks';
import type { H3Event } from 'h3';

/** What the cache stage needs from the HTTP request, which the stage context does not carry. */
export interface RequestScope {
  headers: Headers;
  /** performance.now() when the request arrived. */
  t0: number;
}

const scope = new AsyncLocalStorage<RequestScope>();

/**
 * App middleware: makes a request's cache directives visible to the cache stage, which runs deep inside the
 * proxy pipeline and is handed no request headers. Only requests that carry a directive pay for the scope.
 */
export function cacheScopeMiddleware(event: H3Event, next: () => unknown): unknown {
  const headers = event.req.headers;
  if (!headers.has('x-router-cache') && !headers.has('cache-control')) return next();
  return scope.run({ headers, t0: performance.now() }, next);
}

/** The scope of the request being handled, when it carries a cache directive. */
export function currentScope(): RequestScope | undefined {
  return scope.getStore();
}
