/**
 * Checks real replies of a real daemon against the reply schema their route declares (RouteDef.reply):
 * a JSON reply parses with nothing left over (z.object drops keys it does not name, so a field the schema
 * forgot shows up as a difference), a 204 has no body, a reply that is not JSON carries one of its declared
 * media types. Used by test/http/reply-schemas.test.ts and the test/http/replies-*.test.ts files.
 */
import { expect } from 'vitest';
import WebSocket from 'ws';
import type { z } from 'zod';
import { ERROR_REPLIES, otherMedia, replyMedia, streamedReplies, WEBSOCKET } from '../../src/daemon/http/replies.js';
import type { RouteDef } from '../../src/daemon/http/routes.js';
import { ROUTES } from '../../src/daemon/routes.js';
import type { RouterProcess } from './router-daemon.js';

export const routeId = (def: RouteDef) => `${def.method} ${def.path}`;

/** The route a request reaches: same method, the path matched as h3 matches it (a literal before a parameter). */
export function routeOf(method: string, path: string): RouteDef {
  const pathname = path.split('?')[0]!;
  const candidates = ROUTES.filter((def) => def.method === method).filter((def) => {
    const re = def.path
      .split('/')
      .map((seg) => (seg.startsWith('**') ? '.+' : seg.startsWith(':') ? '[^/]+' : seg.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
      .join('/');
    return new RegExp(`^${re}$`).test(pathname);
  });
  candidates.sort((a, b) => (a.path.match(/[:*]/g)?.length ?? 0) - (b.path.match(/[:*]/g)?.length ?? 0));
  if (!candidates[0]) throw new Error(`no route for ${method} ${path}`);
  return candidates[0];
}

/** Route ids a test file checked, for a file that wants to show it covered a whole family. */
export const exercised = new Set<string>();

export interface CheckOptions {
  /** Request headers besides the CLI token (an API key for client routes, a content type). */
  headers?: Record<string, string>;
  /** A body sent as is (not JSON-encoded). */
  raw?: BodyInit;
  /** The status expected instead of the route's documented one. */
  status?: number;
  /** Send no CLI token (public routes, API-key callers). */
  anonymous?: boolean;
}

/**
 * Calls the daemon and checks the reply against its route's schema. Answers the parsed JSON (or the text of a
 * reply that is not JSON).
 */
// biome-ignore lint/suspicious/noExplicitAny: replies are read by the test that asked for them
export async function checkReply<T = any>(router: RouterProcess, method: string, path: string, body?: unknown, opts: CheckOptions = {}): Promise<T> {
  const def = routeOf(method, path);
  exercised.add(routeId(def));
  const headers: Record<string, string> = { ...(opts.anonymous ? {} : { 'x-router-cli-token': router.cliToken }), ...opts.headers };
  if ((body !== undefined || method === 'POST') && !opts.raw && !Object.keys(headers).some((h) => h.toLowerCase() === 'content-type')) {
    headers['content-type'] = 'application/json';
  }
  const res = await fetch(`${router.url}${path}`, { method, headers, body: opts.raw ?? (body === undefined ? undefined : JSON.stringify(body)) });
  const text = await res.text();
  expect(res.status, `${method} ${path}: ${text.slice(0, 500)}`).toBe(opts.status ?? def.status ?? 200);
  expect(def.reply, `${routeId(def)} declares no reply schema`).toBeDefined();
  const schema = def.reply as z.ZodType;
  const media = replyMedia.get(schema);
  if (media?.contentTypes.length === 0) {
    expect(text, `${routeId(def)} answers no content`).toBe('');
    return undefined as T;
  }
  if (media) {
    const type = (res.headers.get('content-type') ?? '').split(';')[0]!.trim();
    expect(media.contentTypes, `${routeId(def)}: content type ${type}`).toContain(type);
    return (type.includes('json') ? JSON.parse(text) : text) as T;
  }
  const type = (res.headers.get('content-type') ?? '').split(';')[0]!.trim();
  if (type === 'text/event-stream' && streamedReplies.has(schema)) return text as T;
  if (otherMedia.get(schema)?.contentTypes.includes(type)) return text as T;
  expect(type, `${routeId(def)} answers JSON`).toBe('application/json');
  const json = JSON.parse(text);
  const parsed = schema.safeParse(json);
  expect(parsed.error?.issues ?? [], `${routeId(def)}`).toEqual([]);
  expect(parsed.data, `${routeId(def)}: a field of the reply is not in its schema`).toEqual(json);
  return json as T;
}

/**
 * Opens the WebSocket of a route that declares one (`WEBSOCKET`, status 101): the handshake must answer 101
 * and the socket open. Answers the open socket (the caller closes it).
 */
export async function checkWebSocket(router: RouterProcess, path: string, headers: Record<string, string> = { 'x-router-cli-token': router.cliToken }): Promise<WebSocket> {
  const def = routeOf('GET', path);
  exercised.add(routeId(def));
  expect(def.reply, `${routeId(def)} declares the WebSocket reply`).toBe(WEBSOCKET);
  expect(def.status, `${routeId(def)} documents 101`).toBe(101);
  const ws = new WebSocket(`${router.url.replace(/^http/, 'ws')}${path}`, { headers });
  // 'open' follows a 101 handshake only; any other status is an unexpected response.
  const status = await new Promise<number>((resolve, reject) => {
    ws.once('open', () => resolve(101));
    ws.once('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0));
    ws.once('error', reject);
  });
  expect(status, `GET ${path}: handshake`).toBe(101);
  return ws;
}

/**
 * Calls a route expecting an error and checks the body against the error shape the route documents (its
 * client format's, RouteDef.errorFormat, else the standard body). Answers the parsed body.
 */
export async function checkError<T = any>(router: RouterProcess, method: string, path: string, body: unknown, status: number, opts: CheckOptions = {}): Promise<T> {
  const def = routeOf(method, path);
  const headers: Record<string, string> = { ...(opts.anonymous ? {} : { 'x-router-cli-token': router.cliToken }), 'content-type': 'application/json', ...opts.headers };
  const res = await fetch(`${router.url}${path}`, { method, headers, body: opts.raw ?? (body === undefined ? undefined : JSON.stringify(body)) });
  const text = await res.text();
  expect(res.status, `${method} ${path}: ${text.slice(0, 500)}`).toBe(status);
  const schema = def.errorFormat === 'anthropic' ? ERROR_REPLIES.anthropic : def.errorFormat === 'gemini' ? ERROR_REPLIES.gemini : ERROR_REPLIES.standard;
  const json = JSON.parse(text);
  const parsed = schema.safeParse(json);
  expect(parsed.error?.issues ?? [], `${routeId(def)} error`).toEqual([]);
  expect(parsed.data, `${routeId(def)}: a field of the error is not in its schema`).toEqual(json);
  return json as T;
}
