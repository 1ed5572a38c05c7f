/**
 * The typed contract of the daemon's routes, as the CLI and the dashboard call them: a route by its table
 * name (`'POST /api/keys'`), its params, query and body, and its reply, all generated from the route table
 * (routes.gen.ts, scripts/api-types.mjs). Neither client keeps a hand copy of a reply shape.
 */
import type { Routes } from './routes.gen.js';

export type { Routes };

/** A route's table name: `METHOD /path/{param}`. */
export type RouteKey = keyof Routes;

/** What a route answers on success. */
export type RouteReply<K extends RouteKey> = Routes[K]['reply'];

/** What a call of the route takes: params, query and body as its schemas declare them. */
export type RouteRequest<K extends RouteKey> = Omit<Routes[K], 'reply'>;

/** The request argument: optional when the route needs nothing. */
export type RouteArgs<K extends RouteKey> = object extends RouteRequest<K> ? [req?: RouteRequest<K>] : [req: RouteRequest<K>];

/** `/api/keys/{id}` + params -> `/api/keys/abc`; the query appended without empty values. */
export function routeUrl(path: string, params?: Record<string, string>, query?: Record<string, unknown>): string {
  let url = path.replace(/\{(\w+)\}/g, (_m, name: string) => encodeURIComponent(params?.[name] ?? ''));
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(query ?? {})) if (v !== undefined && v !== null && v !== '') q.set(k, String(v));
  const s = q.toString();
  if (s) url += `?${s}`;
  return url;
}

/** Splits a route's table name into its method and path template. */
export function splitRoute(route: string): { method: string; path: string } {
  const space = route.indexOf(' ');
  return { method: route.slice(0, space), path: route.slice(space + 1) };
}
