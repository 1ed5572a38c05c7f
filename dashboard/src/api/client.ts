import { routeUrl, splitRoute, type RouteArgs, type RouteKey, type RouteReply } from '../../../src/shared/api/contract';
import type { Replies } from './replies';

export { routeUrl };

/** An error reply of the daemon: its own message, status, code and the offending field (`param`). */
export class ApiError extends Error {
  constructor(
    message: string,
    readonly status: number,
    readonly code: string,
    readonly param?: string,
  ) {
    super(message);
  }
}

/** A route's reply: its generated type; the hand-typed ones (replies.ts) until their routes declare a reply schema. */
type Reply<K extends RouteKey> = K extends keyof Replies ? Replies[K] : RouteReply<K>;

/** Called on a 401 from any route but login: the session ended (expired, logged out elsewhere, password changed). */
let onUnauthorized: (() => void) | undefined;
export function setUnauthorizedHandler(fn: () => void): void {
  onUnauthorized = fn;
}

/** Reads an error body into an ApiError carrying the daemon's message. */
export async function toApiError(res: Response): Promise<ApiError> {
  const text = await res.text().catch(() => '');
  try {
    const e = JSON.parse(text).error;
    if (e?.message) return new ApiError(String(e.message), res.status, String(e.code ?? ''), e.param ? String(e.param) : undefined);
  } catch {}
  return new ApiError(text.slice(0, 300) || `HTTP ${res.status}`, res.status, '');
}

/**
 * Calls a route of the daemon by its table name (`'POST /api/keys'`), with the params, query and body that
 * route's schema declares, answering its declared reply (src/shared/api/, generated from the route table). Same origin, the session cookie rides along; POSTs always say
 * application/json (the request guard requires it).
 */
export async function api<K extends RouteKey>(route: K, ...[req]: RouteArgs<K>): Promise<Reply<K>> {
  const { method, path } = splitRoute(route);
  const r = (req ?? {}) as { params?: Record<string, string>; query?: Record<string, unknown>; body?: unknown };
  const headers: Record<string, string> = { accept: 'application/json' };
  if (r.body !== undefined || method === 'POST') headers['content-type'] = 'application/json';
  const res = await fetch(routeUrl(path, r.params, r.query), {
    method,
    headers,
    credentials: 'same-origin',
    body: r.body === undefined ? undefined : JSON.stringify(r.body),
  });
  if (!res.ok) {
    const err = await toApiError(res);
    if (res.status === 401 && route !== 'POST /api/auth/login') onUnauthorized?.();
    throw err;
  }
  if (res.status === 204) return undefined as Reply<K>;
  const text = await res.text();
  return (text ? JSON.parse(text) : undefined) as Reply<K>;
}
