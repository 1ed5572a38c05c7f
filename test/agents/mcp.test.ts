/**
 * The MCP server end to end: the official SDK's own Client over both transports (Streamable HTTP and the
 * older SSE) against a real daemon and a mock upstream; each tool is called; the chat tool is counted
 * against the caller's key (usage row); the audit log and its stats record every call.
 */
import { createHash } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { LATEST_PROTOCOL_VERSION } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startProxyEnv, type ProxyEnv } from '../support/proxy-env.js';

let env: ProxyEnv;
let manageKey: string;
let manageKeyId: string;
let hook: Server;
let hookHits = 0;
let webhookId: string;

const TOOL_NAMES = ['list_models', 'list_combos', 'chat', 'usage_summary', 'provider_health', 'recent_errors', 'memory_search', 'memory_add', 'list_webhooks', 'webhook_test'];

beforeAll(async () => {
  env = await startProxyEnv([{ provider: 'openai', apiKey: 'sk-mock' }]);
  const k = await env.router.manage('POST', '/api/keys', { name: 'mcp-client', scopes: ['manage'] });
  manageKey = k.json.key;
  manageKeyId = k.json.id;
  expect((await env.router.manage('POST', '/api/combos', { name: 'mcp-combo', models: ['openai/gpt-4o'] })).status).toBe(201);
  expect((await env.router.manage('PATCH', '/api/settings', { allowPrivateWebhookDestinations: true })).status).toBe(200);
  hook = createServer((req, res) => {
    hookHits++;
    req.resume();
    req.on('end', () => res.writeHead(200).end('pong'));
  });
  await new Promise<void>((r) => hook.listen(0, '127.0.0.1', r));
  const w = await env.router.manage('POST', '/api/webhooks', { url: `http://127.0.0.1:${(hook.address() as AddressInfo).port}/hook`, events: ['*'] });
  expect(w.status).toBe(201);
  webhookId = w.json.id;
}, 60_000);

afterAll(async () => {
  await env?.stop();
  hook?.close();
});

const auth = () => ({ authorization: `Bearer ${manageKey}` });

async function connect(kind: 'stream' | 'sse'): Promise<Client> {
  const client = new Client({ name: `vitest-${kind}`, version: '1.0.0' });
  const transport =
    kind === 'stream'
      ? new StreamableHTTPClientTransport(new URL(`${env.router.url}/api/mcp/stream`), { requestInit: { headers: auth() } })
      : new SSEClientTransport(new URL(`${env.router.url}/api/mcp/sse`), { requestInit: { headers: auth() } });
  await client.connect(transport);
  return client;
}

function textOf(r: unknown): string {
  const c = ((r as { content: Array<{ type: string; text?: string }> }).content)[0]!;
  return c.text ?? '';
}

async function callAll(client: Client, tag: string) {
  const calls: Record<string, Record<string, unknown>> = {
    list_models: { filter: 'gpt-4o' },
    list_combos: {},
    chat: { model: 'mcp-combo', messages: [{ role: 'user', content: `hello ${tag}` }], maxTokens: 50 },
    usage_summary: { hours: 1, by: 'model' },
    provider_health: {},
    recent_errors: { limit: 5 },
    memory_add: { content: `The deploy password rotates on Mondays (${tag}).`, key: `deploy-${tag}` },
    memory_search: { query: 'deploy password', strategy: 'exact' },
    list_webhooks: {},
    webhook_test: { id: webhookId },
  };
  const out: Record<string, any> = {};
  for (const [name, args] of Object.entries(calls)) {
    const r = await client.callTool({ name, arguments: args });
    expect(r.isError, `${name}: ${textOf(r)}`).toBeFalsy();
    out[name] = r.structuredContent;
    expect(JSON.parse(textOf(r))).toEqual(r.structuredContent);
  }
  return out;
}

describe('MCP server', () => {
  it('Streamable HTTP: the SDK client negotiates the current protocol, lists the tools and calls each', async () => {
    const client = await connect('stream');
    expect(client.getServerVersion()?.name).toBe('router');
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual([...TOOL_NAMES].sort());
    for (const t of tools) {
      expect(t.description!.length).toBeGreaterThan(40);
      expect(t.inputSchema.type).toBe('object');
    }
    expect(tools.find((t) => t.name === 'chat')!.inputSchema.required).toEqual(['model', 'messages']);

    const status = await env.router.manage('GET', '/api/mcp/status');
    expect(status.json.protocolVersion).toBe(LATEST_PROTOCOL_VERSION);
    const mine = status.json.sessions.find((s: any) => s.client?.name === 'vitest-stream');
    expect(mine).toMatchObject({ transport: 'stream', caller: `key:${manageKeyId}`, protocolVersion: LATEST_PROTOCOL_VERSION });

    const before = env.mock.requests.length;
    const out = await callAll(client, 'stream');
    expect(out.list_models.models.map((m: any) => m.id)).toContain('openai/gpt-4o');
    expect(out.list_combos.combos.map((c: any) => c.name)).toEqual(['mcp-combo']);
    expect(out.chat.text).toBe('Hello from the mock.');
    expect(out.chat.model).toBe('openai/gpt-4o');
    expect(out.usage_summary.rows.length).toBeGreaterThan(0);
    expect(out.provider_health.connections[0]).toMatchObject({ provider: 'openai', isActive: true });
    expect(Array.isArray(out.provider_health.breakers)).toBe(true);
    expect(Array.isArray(out.recent_errors.errors)).toBe(true);
    expect(out.memory_add.key).toBe('deploy-stream');
    expect(JSON.stringify(out.memory_search)).toContain('deploy-stream');
    expect(out.list_webhooks.webhooks.map((w: any) => w.id)).toEqual([webhookId]);
    expect(out.webhook_test).toMatchObject({ delivered: true, status: 200 });
    expect(hookHits).toBeGreaterThan(0);
    // The chat went upstream once, with the user's text.
    const chats = env.mock.requests.slice(before).filter((r) => r.endpoint === 'openai.chat');
    expect(chats).toHaveLength(1);
    expect(chats[0]!.body).toContain('hello stream');

    // The chat tool's usage row is counted against the caller's key.
    const logs = await env.router.manage('GET', `/api/logs?key=${manageKeyId}`);
    expect(logs.status).toBe(200);
    expect(logs.json.logs).toHaveLength(1);
    expect(logs.json.logs[0]).toMatchObject({ apiKeyId: manageKeyId, endpoint: 'mcp', status: 200, model: 'gpt-4o' });
    await client.close();
  });

  it('a tool error is a tool result with isError (and an audited failure), not a protocol error', async () => {
    const client = await connect('stream');
    env.mock.enqueue({ type: 'status', status: 400, message: 'bad things' });
    const r = await client.callTool({ name: 'chat', arguments: { model: 'openai/gpt-4o', messages: [{ role: 'user', content: 'x' }] } });
    expect(r.isError).toBe(true);
    expect(textOf(r)).toMatch(/400/);
    const missing = await client.callTool({ name: 'webhook_test', arguments: { id: 'nope' } });
    expect(missing.isError).toBe(true);
    expect(textOf(missing)).toMatch(/not found/i);
    // Invalid arguments are refused by the schema before the tool runs.
    const bad = await client.callTool({ name: 'list_models', arguments: { limit: -3 } });
    expect(bad.isError).toBe(true);
    await client.close();
  });

  it('SSE transport: the SDK client lists the tools and calls each', async () => {
    const client = await connect('sse');
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual([...TOOL_NAMES].sort());
    const status = await env.router.manage('GET', '/api/mcp/status');
    expect(status.json.transports.find((t: any) => t.name === 'sse').sessions).toBe(1);
    const out = await callAll(client, 'sse');
    expect(out.chat.text).toBe('Hello from the mock.');
    expect(out.webhook_test.delivered).toBe(true);
    await client.close();
    // The closed stream ends the session.
    await expect.poll(async () => (await env.router.manage('GET', '/api/mcp/status')).json.transports.find((t: any) => t.name === 'sse').sessions).toBe(0);
  });

  it('every call is audited (caller, tool, argument size and sha256, duration, outcome) and counted per tool', async () => {
    const page = await env.router.manage('GET', '/api/mcp/audit?limit=500');
    expect(page.status).toBe(200);
    const entries = page.json.entries as any[];
    for (const name of TOOL_NAMES) {
      expect(entries.filter((e) => e.tool === name && e.ok).length, name).toBeGreaterThanOrEqual(2);
    }
    expect(new Set(entries.map((e) => e.transport))).toEqual(new Set(['stream', 'sse']));
    const test = entries.find((e) => e.tool === 'webhook_test' && e.ok)!;
    const args = JSON.stringify({ id: webhookId });
    expect(test).toMatchObject({ caller: `key:${manageKeyId}`, keyId: manageKeyId, argBytes: Buffer.byteLength(args), argSha256: createHash('sha256').update(args).digest('hex'), error: null });
    expect(Date.parse(test.time)).toBeGreaterThan(Date.now() - 120_000);
    expect(test.durationMs).toBeGreaterThanOrEqual(0);
    const failed = entries.filter((e) => !e.ok);
    expect(failed.map((e) => e.tool).sort()).toEqual(['chat', 'list_models', 'webhook_test']);
    expect(failed.find((e) => e.tool === 'webhook_test').error).toMatch(/not found/i);
    // Filters and paging.
    const only = await env.router.manage('GET', '/api/mcp/audit?tool=chat&ok=false');
    expect(only.json.entries).toHaveLength(1);
    const first = await env.router.manage('GET', '/api/mcp/audit?limit=3');
    expect(first.json.entries).toHaveLength(3);
    const next = await env.router.manage('GET', `/api/mcp/audit?limit=3&cursor=${first.json.nextCursor}`);
    expect(next.json.entries[0].id).toBeLessThan(first.json.entries[2].id);

    const stats = await env.router.manage('GET', '/api/mcp/audit/stats?bucket=minute');
    expect(stats.status).toBe(200);
    const chat = stats.json.tools.find((t: any) => t.tool === 'chat');
    expect(chat).toEqual({ tool: 'chat', calls: 3, errors: 1 });
    const points = (stats.json.points as any[]).filter((p) => p.tool === 'chat');
    expect(points.reduce((n, p) => n + p.calls, 0)).toBe(3);
    expect(points[0].time).toMatch(/:00\.000Z$/);
    expect((await env.router.manage('GET', '/api/mcp/audit/stats?bucket=week')).status).toBe(400);
    expect((await env.router.manage('GET', '/api/mcp/audit?limit=0')).status).toBe(400);
  });

  it('GET /api/mcp/tools lists each tool with its JSON Schema', async () => {
    const r = await env.router.manage('GET', '/api/mcp/tools');
    expect(r.json.tools.map((t: any) => t.name)).toEqual(TOOL_NAMES);
    expect(r.json.tools.find((t: any) => t.name === 'memory_add').inputSchema.properties.type.enum).toContain('factual');
  });

  it('sessions belong to their caller; unknown sessions answer 404; limits hold', async () => {
    const client = await connect('stream');
    const sid = (client.transport as StreamableHTTPClientTransport).sessionId!;
    const body = JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'tools/list' });
    const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-session-id': sid, 'mcp-protocol-version': LATEST_PROTOCOL_VERSION };
    const other = await env.router.manage('POST', '/api/keys', { name: 'other', scopes: ['manage'] });
    const stolen = await fetch(`${env.router.url}/api/mcp/stream`, { method: 'POST', headers: { ...headers, authorization: `Bearer ${other.json.key}` }, body });
    expect(stolen.status).toBe(403);
    const unknown = await fetch(`${env.router.url}/api/mcp/stream`, { method: 'POST', headers: { ...headers, ...auth(), 'mcp-session-id': crypto.randomUUID() }, body });
    expect(unknown.status).toBe(404);
    const huge = await fetch(`${env.router.url}/api/mcp/stream`, { method: 'POST', headers: { ...headers, ...auth() }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: { pad: 'x'.repeat(1_100_000) } }) });
    expect(huge.status).toBe(413);
    // Clients that close without DELETE leave their sessions open until they idle out: cap at what is open now.
    const open = (await env.router.manage('GET', '/api/mcp/status')).json.sessions.length;
    expect((await env.router.manage('PATCH', '/api/settings', { agents: { mcpMaxSessions: open } })).status).toBe(200);
    const second = new Client({ name: 'second', version: '1' });
    await expect(second.connect(new StreamableHTTPClientTransport(new URL(`${env.router.url}/api/mcp/stream`), { requestInit: { headers: auth() } }))).rejects.toThrow(/503|Too many/);
    // DELETE ends the session (the SDK's terminateSession), freeing the slot.
    await (client.transport as StreamableHTTPClientTransport).terminateSession();
    await client.close();
    const third = await connect('stream');
    await third.close();
    expect((await env.router.manage('PATCH', '/api/settings', { agents: { mcpMaxSessions: 32 } })).status).toBe(200);
  });
});
