import type { ServerResponse } from 'node:http';
import { z } from 'zod';
import { FastResponse } from 'srvx';
import { HEADER } from '../../shared/headers.js';
import { HANDLED } from '../http/app.js';
import { readJsonBody } from '../http/body.js';
import { RouterError } from '../http/errors.js';
import { isoTime, rawReply } from '../http/replies.js';
import { route, type RouteContext, type RouteDef } from '../http/routes.js';
import { type AuditEntry, BUCKET_MS, type Bucket } from './audit.js';
import { toolCatalog } from './tools.js';

/** The SSE transport's message endpoint: what its `endpoint` event names (with `?sessionId=`). */
export const MCP_MESSAGE_PATH = '/api/mcp/messages';

/** The SDK transport's Response, with router's version header like every reply. */
function versioned(res: Response, version: string): Response {
  try {
    res.headers.set(HEADER.version, version);
    return res;
  } catch {
    // Immutable headers: copy into a new Response (the body stream is passed on, not read).
    const headers = new Headers(res.headers);
    headers.set(HEADER.version, version);
    return new Response(res.body, { status: res.status, statusText: res.statusText, headers });
  }
}

const streamHandler = async ({ event, services, auth }: RouteContext) =>
  versioned(await services.mcp.handleStream(event.req as unknown as Request, auth), services.version);

const auditQuery = z
  .object({
    limit: z.coerce.number().int().min(1).max(500).default(50),
    cursor: z.string().regex(/^\d{1,15}$/).optional(),
    tool: z.string().max(100).optional(),
    caller: z.string().max(200).optional(),
    ok: z.enum(['true', 'false']).optional(),
  })
  .strict();

const statsQuery = z
  .object({
    bucket: z.enum(['minute', 'hour', 'day']).default('hour'),
    from: z.string().max(40).optional(),
    to: z.string().max(40).optional(),
  })
  .strict();

function time(s: string | undefined, name: string): number | undefined {
  if (s === undefined) return undefined;
  const n = /^\d{1,16}$/.test(s) ? Number(s) : Date.parse(s);
  if (!Number.isFinite(n)) throw new RouterError(400, `Invalid query parameter '${name}': expected unix milliseconds or an ISO 8601 date-time.`, { extra: { param: name } });
  return n;
}

/** Streamable HTTP: a JSON-RPC reply as JSON, or an event stream (GET, and POSTs the server streams). */
const streamReply = rawReply('application/json', 'text/event-stream');
const statusReply = z.object({
  protocolVersion: z.string(),
  supportedProtocolVersions: z.array(z.string()),
  transports: z.array(z.object({ name: z.enum(['streamable-http', 'sse']), path: z.string(), messagePath: z.string().optional(), sessions: z.number() })),
  limits: z.object({ maxSessions: z.number(), sessionIdleSeconds: z.number(), maxPayloadBytes: z.number() }),
  tools: z.number(),
  sessions: z.array(
    z.object({
      id: z.string(),
      transport: z.enum(['stream', 'sse']),
      caller: z.string(),
      protocolVersion: z.string().nullable(),
      client: z.object({ name: z.string(), version: z.string() }).nullable(),
      createdAt: isoTime,
      lastSeenAt: isoTime,
    }),
  ),
});
const toolsReply = z.object({
  tools: z.array(z.object({ name: z.string(), title: z.string(), description: z.string(), readOnly: z.boolean(), inputSchema: z.record(z.string(), z.unknown()) })),
});
const auditReply = z.object({
  entries: z.array(
    z.object({
      id: z.number(),
      time: isoTime,
      caller: z.string(),
      keyId: z.string().nullable(),
      transport: z.enum(['stream', 'sse', 'assistant']),
      sessionId: z.string().nullable(),
      tool: z.string(),
      argBytes: z.number(),
      argSha256: z.string(),
      durationMs: z.number(),
      ok: z.boolean(),
      error: z.string().nullable(),
    }) satisfies z.ZodType<AuditEntry>,
  ),
  nextCursor: z.string().nullable(),
});
const auditStatsReply = z.object({
  bucket: z.string(),
  from: isoTime,
  to: isoTime,
  tools: z.array(z.object({ tool: z.string(), calls: z.number(), errors: z.number() })),
  points: z.array(z.object({ time: isoTime, tool: z.string(), calls: z.number(), errors: z.number(), avgDurationMs: z.number() })),
});

const sessionQuery = z.object({ sessionId: z.string().uuid() }).strict();

/** MCP server routes (spec "Also present under /api": mcp/*). Management tier: manage-scope keys work from anywhere. */
export const mcpRoutes: RouteDef[] = [
  ...(['POST', 'GET', 'DELETE'] as const).map((method) =>
    route({
      method,
      path: '/api/mcp/stream',
      tier: 'management',
      tag: 'mcp',
      summary: `MCP Streamable HTTP transport (${method === 'POST' ? 'JSON-RPC messages' : method === 'GET' ? "the server's event stream" : 'end the session'})`,
      rawBody: method === 'POST',
      reply: streamReply,
      handler: streamHandler,
    }),
  ),
  route({
    method: 'GET',
    path: '/api/mcp/sse',
    sideEffects: true,
    tier: 'management',
    tag: 'mcp',
    summary: 'MCP SSE transport (2024-11-05): the event stream; its `endpoint` event names the message URL',
    reply: rawReply('text/event-stream'),
    handler: async ({ event, services, auth }) => {
      const res = event.req.runtime?.node?.res as ServerResponse | undefined;
      if (!res) throw new RouterError(501, 'The MCP SSE transport needs a socket (use /api/mcp/stream).');
      await services.mcp.openSse(res, auth, MCP_MESSAGE_PATH);
      return HANDLED;
    },
  }),
  route({
    method: 'POST',
    path: MCP_MESSAGE_PATH,
    tier: 'management',
    tag: 'mcp',
    summary: 'MCP SSE transport: one JSON-RPC message for the session (?sessionId=); the reply arrives on the event stream',
    rawBody: true,
    query: sessionQuery,
    status: 202,
    reply: rawReply('text/plain'),
    handler: async ({ event, services, auth, query }) => {
      const limit = services.settings.get().agents.mcpMaxPayloadBytes;
      const message = await readJsonBody(event, limit);
      await services.mcp.sseMessage(query.sessionId, message, auth);
      return new FastResponse('Accepted', { status: 202, headers: { 'content-type': 'text/plain; charset=utf-8', [HEADER.version]: services.version } });
    },
  }),
  route({
    method: 'GET',
    path: '/api/mcp/status',
    tier: 'management',
    tag: 'mcp',
    summary: 'MCP server status: transports, open sessions, protocol version (latest and supported), limits',
    reply: statusReply,
    handler: ({ services }) => services.mcp.status(),
  }),
  route({
    method: 'GET',
    path: '/api/mcp/tools',
    tier: 'management',
    tag: 'mcp',
    summary: "The MCP server's tools with their descriptions and input JSON Schemas",
    reply: toolsReply,
    handler: () => ({ tools: toolCatalog() }),
  }),
  route({
    method: 'GET',
    path: '/api/mcp/audit',
    tier: 'management',
    tag: 'mcp',
    summary: 'MCP tool-call audit log, newest first: time, caller, tool, argument size and sha256, duration, ok/error',
    query: auditQuery,
    reply: auditReply,
    handler: async ({ services, query }) =>
      await services.mcp.audit.list({
        limit: query.limit,
        before: query.cursor === undefined ? undefined : Number(query.cursor),
        tool: query.tool,
        caller: query.caller,
        ok: query.ok === undefined ? undefined : query.ok === 'true',
      }),
  }),
  route({
    method: 'GET',
    path: '/api/mcp/audit/stats',
    tier: 'management',
    tag: 'mcp',
    summary: 'MCP tool calls and errors per tool per minute, hour or day (UTC buckets), with totals per tool',
    query: statsQuery,
    reply: auditStatsReply,
    handler: ({ services, query }) => {
      const bucket = query.bucket as Bucket;
      const to = time(query.to, 'to') ?? Date.now() + 1;
      const from = time(query.from, 'from') ?? to - BUCKET_MS[bucket] * (bucket === 'day' ? 30 : bucket === 'hour' ? 24 : 60);
      if (from > to) throw new RouterError(400, "'from' must not be after 'to'.", { extra: { param: 'from' } });
      if ((to - from) / BUCKET_MS[bucket] > 5000) throw new RouterError(400, 'The range holds more than 5000 buckets; narrow it or use a larger bucket.', { extra: { param: 'bucket' } });
      return services.mcp.audit.stats({ bucket, from, to });
    },
  }),
];
