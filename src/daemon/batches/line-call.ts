import { H3Event } from 'h3';
import type { AuthInfo } from '../auth/pipeline.js';
import { errorResponse } from '../http/app.js';
import { RouterError, toErrorReply } from '../http/errors.js';
import type { RouteContext, RouteDef } from '../http/routes.js';
import { pathAllowed, type KeyStore } from '../keys/store.js';
import type { Logger } from '../logger.js';
import { HEADER } from '../../shared/headers.js';
import type { BatchLine } from './jsonl.js';
import { newId } from './store.js';

/**
 * One batch line as a request to router's own route for its endpoint: the route's handler runs with the
 * batch owner's identity, so the line goes through the executor exactly as a client's request would (key
 * scopes and quotas, plan, breakers and cooldowns, failover in combos, a usage row with its cost).
 */

/**
 * How lines reach router's routes: the route serving an endpoint, and a call of its handler with an event
 * and an identity (boot.ts gives the route table and the rest of the route context).
 */
export interface LineRoutes {
  find(endpoint: string): RouteDef | undefined;
  call(route: RouteDef, ctx: Pick<RouteContext, 'event' | 'auth'>): unknown | Promise<unknown>;
}

/** What one line got: the reply's status, body and trace id, and the wait it asked for. */
export interface LineReply {
  status: number;
  body: unknown;
  requestId: string;
  /** Retry-After of a refusal, seconds. */
  retryAfter?: number;
  code?: string;
}

/** The identity a batch's lines run under: its owner's key, re-read so a revoked key stops the batch's calls. */
export function ownerAuth(keys: Pick<KeyStore, 'get'>, keyId: string | null, endpoint: string): AuthInfo {
  const base = { loopback: true, remoteAddress: '127.0.0.1' };
  if (keyId === null) return { via: 'session', key: undefined, ...base };
  const key = keys.get(keyId);
  if (!key?.isActive) throw new RouterError(401, 'The API key that created this batch is no longer active.');
  if (!key.scopes.includes('proxy')) throw new RouterError(403, "The API key that created this batch lacks the 'proxy' scope.");
  if (key.hasPathScopes && !pathAllowed(key.scopes, endpoint)) {
    throw new RouterError(403, `The API key that created this batch may not call ${endpoint} (see its path: scopes).`, { code: 'path_not_allowed' });
  }
  return { via: 'api-key', key, ...base };
}

/** The POST route serving an endpoint (the same one clients call). */
export function routeFor(table: readonly RouteDef[], endpoint: string): RouteDef | undefined {
  return table.find((r) => r.method === 'POST' && r.path === endpoint);
}

async function readReply(res: Response): Promise<LineReply> {
  const text = await res.text();
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = text;
  }
  const retry = Number(res.headers.get('retry-after'));
  const code = (body as { error?: { code?: unknown } } | null)?.error?.code;
  return {
    status: res.status,
    body,
    requestId: res.headers.get(HEADER.traceId) ?? '',
    ...(Number.isFinite(retry) && retry > 0 ? { retryAfter: retry } : {}),
    ...(typeof code === 'string' ? { code } : {}),
  };
}

/** Runs one line through its route with the owner's identity; never throws. */
export async function callLine(deps: { routes: LineRoutes; log: Logger; version: string }, route: RouteDef, auth: AuthInfo | RouterError, line: BatchLine): Promise<LineReply> {
  if (auth instanceof RouterError) {
    const reply = toErrorReply(auth);
    return { status: reply.status, body: reply.body, requestId: '', code: reply.body.error.code };
  }
  const request = new Request(`http://127.0.0.1${line.url}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'user-agent': 'router-batch' },
    body: JSON.stringify(line.body),
  });
  const event = new H3Event(request);
  try {
    const result = await deps.routes.call(route, { event, auth });
    if (result instanceof Response) return await readReply(result);
    return { status: 500, body: { error: { message: 'The route gave no reply.', type: 'server_error', code: 'internal_error' } }, requestId: '' };
  } catch (err) {
    return readReply(errorResponse(err, deps));
  }
}

/** The output-file line of a reply (OpenAI's format; error statuses go to the error file in the same shape). */
export function resultLine(customId: string, reply: LineReply): string {
  return JSON.stringify({
    id: newId('batch_req_'),
    custom_id: customId,
    response: { status_code: reply.status, request_id: reply.requestId, body: reply.body },
    error: null,
  });
}

/** An error-file line for a request that was never answered (expired, cancelled, refused by the provider batch). */
export function errorLine(customId: string, code: string, message: string): string {
  return JSON.stringify({ id: newId('batch_req_'), custom_id: customId, response: null, error: { code, message } });
}
