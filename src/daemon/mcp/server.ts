import type { ServerResponse } from 'node:http';
import { randomUUID } from 'node:crypto';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { SSEServerTransport } from '@modelcontextprotocol/sdk/server/sse.js';
import type { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import type { AuthInfo as McpAuthInfo } from '@modelcontextprotocol/sdk/server/auth/types.js';
import type { CallToolResult, JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import type { AuthInfo } from '../auth/pipeline.js';
import { RouterError, publicReason } from '../http/errors.js';
import { callerName, McpAudit, type AuditTransport } from './audit.js';
import { listedTools, TOOL_BY_NAME, TOOLS, type ToolDef, type ToolDeps } from './tools.js';

/**
 * Router's MCP server (docs/agents.md): the official SDK's server over two transports, Streamable HTTP
 * (`/api/mcp/stream`, the SDK's web-standard transport: a Request in, a Response out, which is what h3 hands
 * routes) and the older SSE transport (`GET /api/mcp/sse` holds the Node response open as the event stream,
 * `POST /api/mcp/messages?sessionId=` feeds it). One SDK server per session; sessions belong to the caller
 * that opened them, expire when idle and are capped in number. Every tool call is audited.
 */

/**
 * Adds resources and prompts to each session's server (`server.registerResource`, `server.registerPrompt`);
 * the skills catalog registers here. Tools are router's own list (tools.ts): an extension must not call
 * `registerTool`.
 */
export type McpExtension = (server: McpServer) => void;

interface Session {
  id: string;
  transport: 'stream' | 'sse';
  stream?: WebStandardStreamableHTTPServerTransport;
  sse?: SSEServerTransport;
  server: McpServer;
  owner: string;
  createdAt: number;
  lastSeen: number;
  protocolVersion?: string;
  client?: { name: string; version: string };
}

/** Router's AuthInfo carried through the SDK (its `authInfo.extra`) to the tool callbacks. */
function toMcpAuth(auth: AuthInfo): McpAuthInfo {
  return { token: '', clientId: callerName(auth), scopes: auth.key ? [...auth.key.scopes] : ['manage'], extra: { router: auth } };
}

/** Runs one tool on behalf of a caller, auditing it; errors become the tool's error text (never a stack). */
export async function runTool(
  services: ToolDeps,
  audit: McpAudit,
  def: ToolDef,
  args: unknown,
  auth: AuthInfo,
  via: { transport: AuditTransport; sessionId?: string },
): Promise<{ ok: true; value: unknown } | { ok: false; error: string }> {
  const ts = Date.now();
  const t0 = performance.now();
  const argText = JSON.stringify(args ?? {});
  let outcome: { ok: true; value: unknown } | { ok: false; error: string };
  try {
    const parsed = def.input.safeParse(args ?? {});
    if (!parsed.success) throw new RouterError(400, `Invalid arguments: ${parsed.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('; ')}`);
    outcome = { ok: true, value: await def.run({ services, auth }, parsed.data) };
  } catch (err) {
    outcome = { ok: false, error: publicReason(err).replace(/\s+/g, ' ').slice(0, 1000) };
  }
  try {
    audit.record({ ts, auth, transport: via.transport, sessionId: via.sessionId, tool: def.name, args: argText, durationMs: performance.now() - t0, error: outcome.ok ? undefined : outcome.error });
  } catch (err) {
    services.log.error('mcp audit write failed', { error: (err as Error).message });
  }
  return outcome;
}

/** How long a session must have been idle before a new one may take its place at the session limit. */
const EVICT_IDLE_MS = 60_000;

type Sdk = typeof import('./sdk.js');
let sdkLoad: Promise<Sdk> | undefined;
/** The MCP SDK, loaded on the first session (sdk.ts says why). */
const sdk = (): Promise<Sdk> => (sdkLoad ??= import('./sdk.js'));

const jsonRpcError = (status: number, code: number, message: string) =>
  new Response(JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: null }), { status, headers: { 'content-type': 'application/json' } });

export class McpService {
  private readonly sessions = new Map<string, Session>();
  private readonly extensions: McpExtension[] = [];
  private closed = false;

  private readonly sweeper: NodeJS.Timeout;

  /** Starts the idle-session sweeper and prunes old audit rows; `services`: what the tools run on. */
  constructor(
    readonly audit: McpAudit,
    private readonly services: ToolDeps,
  ) {
    this.sweeper = setInterval(() => this.sweep(), 15_000);
    this.sweeper.unref();
    this.audit.prune(services.settings.get().agents.mcpAuditRetentionDays).catch((err: unknown) => {
      services.log.warn('mcp audit prune failed', { error: err instanceof Error ? err.message : String(err) });
    });
  }

  /** Registers an extension applied to every new session's server (resources, prompts, more tools). */
  extend(fn: McpExtension): void {
    this.extensions.push(fn);
  }

  private limits() {
    return this.services.settings.get().agents;
  }

  /** A new SDK server with router's tools (and the extensions' additions). */
  private newServer(mcp: Sdk, session: () => Session | undefined, transport: AuditTransport): McpServer {
    const { McpServer, ListToolsRequestSchema, CallToolRequestSchema, McpError, ErrorCode } = mcp;
    const server = new McpServer(
      { name: 'router', title: 'router (model-routing proxy)', version: this.services.version },
      {
        capabilities: { tools: {}, resources: {}, prompts: {}, logging: {} },
        instructions:
          'Tools of the local model router: list models and combos, chat through any model or combo, usage and cost, provider health, recent errors, memory and webhooks.',
      },
    );
    // Router's tools are served through the SDK's low-level handlers rather than registerTool: every call,
    // one with invalid arguments included, then goes through runTool (validated there, and audited).
    server.server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: listedTools() }));
    server.server.setRequestHandler(CallToolRequestSchema, async (req, extra): Promise<CallToolResult> => {
      const def = TOOL_BY_NAME.get(req.params.name);
      if (!def) throw new McpError(ErrorCode.InvalidParams, `Unknown tool: ${req.params.name.slice(0, 100)}`);
      const auth = (extra.authInfo?.extra as { router?: AuthInfo } | undefined)?.router;
      if (!auth) return { isError: true, content: [{ type: 'text', text: 'No caller identity on this request.' }] };
      const r = await runTool(this.services, this.audit, def, req.params.arguments ?? {}, auth, { transport, sessionId: session()?.id ?? extra.sessionId });
      if (!r.ok) return { isError: true, content: [{ type: 'text', text: r.error }] };
      const structured = r.value !== null && typeof r.value === 'object' && !Array.isArray(r.value) ? (r.value as Record<string, unknown>) : { value: r.value };
      return { content: [{ type: 'text', text: JSON.stringify(r.value, null, 2) }], structuredContent: structured };
    });
    for (const ext of this.extensions) ext(server);
    return server;
  }

  /** Notes the protocol version an initialize request negotiates (the SDK's rule) and the client's name. */
  private watchInitialize(mcp: Sdk, t: { onmessage?: (m: JSONRPCMessage, extra?: any) => void }, session: () => Session | undefined, pending: { version?: string; client?: Session['client'] }) {
    const inner = t.onmessage;
    t.onmessage = (m, extra) => {
      const msg = m as { method?: string; params?: { protocolVersion?: string; clientInfo?: { name?: string; version?: string } } };
      if (msg.method === 'initialize') {
        const requested = msg.params?.protocolVersion ?? '';
        pending.version = mcp.SUPPORTED_PROTOCOL_VERSIONS.includes(requested) ? requested : mcp.LATEST_PROTOCOL_VERSION;
        pending.client = { name: String(msg.params?.clientInfo?.name ?? '').slice(0, 100), version: String(msg.params?.clientInfo?.version ?? '').slice(0, 50) };
        const s = session();
        if (s) Object.assign(s, { protocolVersion: pending.version, client: pending.client });
      }
      inner?.(m, extra);
    };
  }

  private owned(id: string, auth: AuthInfo): Session {
    const s = this.sessions.get(id);
    if (!s) throw new RouterError(404, 'Unknown or expired MCP session; initialize a new one.', { code: 'session_not_found' });
    if (s.owner !== callerName(auth)) throw new RouterError(403, 'This MCP session belongs to another caller.');
    s.lastSeen = Date.now();
    return s;
  }

  private admitNew(now = Date.now()): void {
    if (this.closed) throw new RouterError(503, 'router is shutting down.');
    if (this.sessions.size >= this.limits().mcpMaxSessions) {
      // Many clients never end their session (no DELETE): rather than refuse a new one, the session unused
      // the longest gives way, provided it has been idle for a minute (an active one is never dropped).
      let oldest: Session | undefined;
      for (const s of this.sessions.values()) if (!oldest || s.lastSeen < oldest.lastSeen) oldest = s;
      if (oldest && now - oldest.lastSeen >= EVICT_IDLE_MS) {
        this.sessions.delete(oldest.id);
        void oldest.server.close().catch(() => {});
        return;
      }
      throw new RouterError(503, `Too many open MCP sessions (limit ${this.limits().mcpMaxSessions}, setting agents.mcpMaxSessions); close one or wait for idle ones to expire.`);
    }
  }

  private checkSize(declared: string | null): void {
    const max = this.limits().mcpMaxPayloadBytes;
    if (declared !== null && Number(declared) > max) throw new RouterError(413, `MCP message exceeds the limit of ${max} bytes (setting agents.mcpMaxPayloadBytes).`);
  }

  /** Streamable HTTP: POST (messages), GET (the server's event stream), DELETE (end the session). */
  async handleStream(req: Request, auth: AuthInfo): Promise<Response> {
    this.checkSize(req.headers.get('content-length'));
    const id = req.headers.get('mcp-session-id');
    if (id) {
      const s = this.sessions.get(id);
      if (s?.transport !== 'stream') return jsonRpcError(404, -32001, 'Unknown or expired MCP session; initialize a new one.');
      this.owned(id, auth);
      return s.stream!.handleRequest(req, { authInfo: toMcpAuth(auth) });
    }
    if (req.method !== 'POST') return jsonRpcError(400, -32000, 'Mcp-Session-Id header is required (initialize a session with a POST first).');
    this.admitNew();
    const mcp = await sdk();
    let session: Session | undefined;
    const pending: { version?: string; client?: Session['client'] } = {};
    const transport = new mcp.WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      maxRequestBodySize: this.limits().mcpMaxPayloadBytes,
      onsessioninitialized: (sid) => {
        const now = Date.now();
        session = { id: sid, transport: 'stream', stream: transport, server, owner: callerName(auth), createdAt: now, lastSeen: now, protocolVersion: pending.version, client: pending.client };
        this.sessions.set(sid, session);
      },
      onsessionclosed: (sid) => void this.sessions.delete(sid),
    });
    transport.onclose = () => {
      if (transport.sessionId) this.sessions.delete(transport.sessionId);
    };
    const server = this.newServer(mcp, () => session, 'stream');
    await server.connect(transport);
    this.watchInitialize(mcp, transport, () => session, pending);
    const res = await transport.handleRequest(req, { authInfo: toMcpAuth(auth) });
    // Not an initialize request (or a failed one): nothing to keep.
    if (!transport.sessionId) void server.close();
    return res;
  }

  /** SSE transport: holds `res` open as the session's event stream until the client or router closes it. */
  async openSse(res: ServerResponse, auth: AuthInfo, messagePath: string): Promise<void> {
    this.admitNew();
    const mcp = await sdk();
    const transport = new mcp.SSEServerTransport(messagePath, res);
    const now = Date.now();
    const session: Session = { id: transport.sessionId, transport: 'sse', sse: transport, server: undefined as never, owner: callerName(auth), createdAt: now, lastSeen: now };
    session.server = this.newServer(mcp, () => session, 'sse');
    const ended = new Promise<void>((resolve) => res.once('close', () => resolve()));
    this.sessions.set(session.id, session);
    const pending = {};
    try {
      await session.server.connect(transport);
      this.watchInitialize(mcp, transport, () => session, pending);
      // Comments keep idle proxies and clients from dropping the stream.
      const ping = setInterval(() => res.write(': ping\n\n'), 25_000);
      ping.unref();
      await ended;
      clearInterval(ping);
    } finally {
      this.sessions.delete(session.id);
      void session.server.close();
    }
  }

  /** SSE transport: one client message for the session named by `sessionId`. */
  async sseMessage(sessionId: string, message: unknown, auth: AuthInfo): Promise<void> {
    const s = this.owned(sessionId, auth);
    if (s.transport !== 'sse') throw new RouterError(400, 'This session uses the Streamable HTTP transport (/api/mcp/stream).');
    await s.sse!.handleMessage(message, { authInfo: toMcpAuth(auth) });
  }

  /** Closes sessions idle for longer than the setting. */
  sweep(now = Date.now()): number {
    const idleMs = this.limits().mcpSessionIdleSeconds * 1000;
    let n = 0;
    for (const s of [...this.sessions.values()]) {
      if (now - s.lastSeen < idleMs) continue;
      this.sessions.delete(s.id);
      void s.server.close().catch(() => {});
      n++;
    }
    return n;
  }

  async status() {
    const a = this.limits();
    const { LATEST_PROTOCOL_VERSION, SUPPORTED_PROTOCOL_VERSIONS } = await sdk();
    return {
      protocolVersion: LATEST_PROTOCOL_VERSION,
      supportedProtocolVersions: SUPPORTED_PROTOCOL_VERSIONS,
      transports: [
        { name: 'streamable-http', path: '/api/mcp/stream', sessions: [...this.sessions.values()].filter((s) => s.transport === 'stream').length },
        { name: 'sse', path: '/api/mcp/sse', messagePath: '/api/mcp/messages', sessions: [...this.sessions.values()].filter((s) => s.transport === 'sse').length },
      ],
      limits: { maxSessions: a.mcpMaxSessions, sessionIdleSeconds: a.mcpSessionIdleSeconds, maxPayloadBytes: a.mcpMaxPayloadBytes },
      tools: TOOLS.length,
      sessions: [...this.sessions.values()].map((s) => ({
        id: s.id,
        transport: s.transport,
        caller: s.owner,
        protocolVersion: s.protocolVersion ?? null,
        client: s.client ?? null,
        createdAt: new Date(s.createdAt).toISOString(),
        lastSeenAt: new Date(s.lastSeen).toISOString(),
      })),
    };
  }

  /** Ends every session (shutdown): open SSE streams end, so the HTTP server can close. */
  close(): void {
    this.closed = true;
    clearInterval(this.sweeper);
    for (const s of [...this.sessions.values()]) void s.server.close().catch(() => {});
    this.sessions.clear();
    void this.audit.close();
  }
}
