import type { H3Event } from 'h3';
import { FastResponse } from 'srvx';
import { HEADER } from '../../shared/headers.js';
import { VERSION } from '../../shared/version.js';
import type { z } from 'zod';
import type { Services } from '../services.js';
import type { AuthInfo } from '../auth/pipeline.js';
import type { WireFormat } from '../translate/ir.js';

/**
 * Authorization tiers. Every route declares exactly one; the pipeline enforces it before the handler runs.
 * - public: anyone (health, openapi, login).
 * - client: an active API key (proxy and playground routes); also a dashboard session.
 * - management: session cookie, manage-scope key, or the CLI token from loopback (requireLogin rules apply).
 * - local: management credentials AND a loopback caller (AgentBridge, traffic inspector, CLI-tool runtime).
 * - spawn: loopback only and never opened by a manage-scope key (routes that can start processes).
 * - copilot: loopback with management credentials, or a manage-scope key when the opt-in setting is on.
 * - metrics: management; also any loopback caller without a credential when the metricsOpenOnLoopback
 *   setting is on (a Prometheus server on this machine scraping /metrics).
 */
export type Tier = 'public' | 'client' | 'management' | 'local' | 'spawn' | 'copilot' | 'metrics';
export const TIERS: readonly Tier[] = ['public', 'client', 'management', 'local', 'spawn', 'copilot', 'metrics'];

/** The HTTP methods plus the WebDAV ones the note vault serves (vault/webdav.ts; not in OpenAPI). */
export type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE' | 'OPTIONS' | 'PROPFIND' | 'MKCOL' | 'MOVE';

export interface RouteContext<B = any, Q = any> {
  event: H3Event;
  services: Services;
  auth: AuthInfo;
  params: Record<string, string>;
  body: B;
  query: Q;
}

export interface RouteDef<B = any, Q = any> {
  method: Method;
  /** h3 route syntax (`/api/keys/:id`, `/v1beta/models/**`). */
  path: string;
  tier: Tier;
  summary: string;
  tag: string;
  /** JSON body schema; when present the body is read (size-limited), parsed and validated before the handler. */
  body?: z.ZodType<B>;
  query?: z.ZodType<Q>;
  /** Handler reads the raw body itself (proxy routes); the size limit still applies. */
  rawBody?: boolean;
  /**
   * Media types a raw-body route accepts instead of JSON (uploads). Only types a web page cannot send
   * cross-origin without a CORS preflight are honoured (never a form or text/plain; request-guard.ts).
   */
  bodyTypes?: readonly string[];
  /**
   * A body-less POST (OpenAI's `POST /v1/batches/{id}/cancel`, as the `openai` SDK sends it, with no
   * Content-Type) is taken from a caller that presents its API key in a header, which a web page cannot
   * add to a cross-origin request without a CORS preflight (request-guard.ts).
   */
  bodylessWithKey?: boolean;
  /**
   * A GET that changes state or starts work (binds a port, writes, calls a provider, runs a program): the
   * browser guard checks its Origin and Sec-Fetch-Site as it does a POST's, so a page elsewhere cannot set
   * it off with an `<img>` or a no-cors fetch (request-guard.ts). The method stays GET where CONTRACT fixes it.
   */
  sideEffects?: boolean;
  /** Body limit of this route in bytes, instead of the tier's setting (large uploads stream to disk). */
  bodyLimit?: number;
  /**
   * The client format whose error shape this route's error replies take (Anthropic's and Gemini's routes);
   * without it, the standard body (OpenAI's shape).
   */
  errorFormat?: WireFormat;
  /** Documented success status (default 200). */
  status?: number;
  /**
   * What the route answers with that status: the JSON body's schema, or a non-JSON reply from http/replies.ts
   * (`rawReply`, `NO_CONTENT`). OpenAPI's reply and the typed client's reply type come from it.
   */
  reply?: z.ZodType;
  handler: (ctx: RouteContext<B, Q>) => unknown | Promise<unknown>;
}

/** Declares a route with its types inferred from the schemas. */
export function route<B = undefined, Q = undefined>(def: RouteDef<B, Q>): RouteDef<B, Q> {
  return def;
}

/** A JSON response with a status and optional headers. */
export function json(status: number, body: unknown, headers?: Record<string, string>): Response {
  return new FastResponse(JSON.stringify(body), {
    status,
    headers: { ...headers, 'content-type': 'application/json; charset=utf-8', [HEADER.version]: VERSION },
  });
}

/** 204 No Content. */
export function noContent(): Response {
  return new FastResponse(null, { status: 204, headers: { [HEADER.version]: VERSION } });
}
