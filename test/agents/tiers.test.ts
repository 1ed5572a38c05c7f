/**
 * Who may reach the agent surfaces, in-process through `app.request(url, init, {remoteAddress})` (the
 * pipeline reads the caller's address from the context; see test/foundation/auth.test.ts). MCP: management
 * credentials; a manage-scope key works from a non-loopback address, nothing else does. Assistant: loopback,
 * or a manage-scope key once the copilotAllowManageKey opt-in is on.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LATEST_PROTOCOL_VERSION } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { bootServices, buildApp, closeServices } from '../../src/daemon/boot.js';
import type { Services } from '../../src/daemon/services.js';

const LO = '127.0.0.1';
const REMOTE = '203.0.113.7';
let home: string;
let services: Services;
let app: ReturnType<typeof buildApp>;
let proxyKey: string;
let manageKey: string;

beforeAll(async () => {
  home = mkdtempSync(join(tmpdir(), 'router-agent-tiers-'));
  services = await bootServices({ home, host: LO, port: 0 });
  app = buildApp(services);
  proxyKey = (await services.keys.create('proxy-only', ['proxy'])).key;
  manageKey = (await services.keys.create('manage-only', ['manage'])).key;
});

afterAll(() => {
  if (services) closeServices(services);
  if (home) rmSync(home, { recursive: true, force: true });
});

async function call(path: string, addr: string, headers: Record<string, string> = {}, init: RequestInit = {}) {
  const res = await app.request(`http://router.test${path}`, { ...init, headers: { ...headers, ...(init.headers as Record<string, string>) } }, { remoteAddress: addr });
  return { res, status: res.status, text: await res.text() };
}
const bearer = (k: string) => ({ authorization: `Bearer ${k}` });

const initialize = {
  method: 'POST',
  headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
  body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: LATEST_PROTOCOL_VERSION, capabilities: {}, clientInfo: { name: 'tier-test', version: '1' } } }),
};

describe('MCP routes from a non-loopback address', () => {
  const paths = ['/api/mcp/status', '/api/mcp/tools', '/api/mcp/audit', '/api/mcp/audit/stats'];

  it('no credential: 401; a key without the manage scope: 403', async () => {
    for (const p of paths) {
      expect((await call(p, REMOTE)).status, p).toBe(401);
      expect((await call(p, REMOTE, bearer(proxyKey))).status, p).toBe(403);
    }
    expect((await call('/api/mcp/stream', REMOTE, {}, initialize)).status).toBe(401);
    expect((await call('/api/mcp/stream', REMOTE, bearer(proxyKey), initialize)).status).toBe(403);
    expect((await call('/api/mcp/sse', REMOTE, bearer(proxyKey))).status).toBe(403);
    expect((await call('/api/mcp/messages?sessionId=00000000-0000-4000-8000-000000000000', REMOTE, bearer(proxyKey), { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' })).status).toBe(403);
  });

  it('a manage-scope key is allowed, and can open an MCP session', async () => {
    for (const p of paths) expect((await call(p, REMOTE, bearer(manageKey))).status, p).toBe(200);
    const r = await call('/api/mcp/stream', REMOTE, bearer(manageKey), initialize);
    expect(r.status).toBe(200);
    expect(r.res.headers.get('mcp-session-id')).toMatch(/^[0-9a-f-]{36}$/);
    expect(r.text).toContain(`"protocolVersion":"${LATEST_PROTOCOL_VERSION}"`);
    const status = JSON.parse((await call('/api/mcp/status', REMOTE, bearer(manageKey))).text);
    expect(status.sessions).toEqual([expect.objectContaining({ transport: 'stream', client: { name: 'tier-test', version: '1' }, protocolVersion: LATEST_PROTOCOL_VERSION })]);
  });

  it('an older protocol version a client asks for is negotiated', async () => {
    const old = { ...initialize, body: initialize.body.replace(LATEST_PROTOCOL_VERSION, '2025-03-26') };
    const r = await call('/api/mcp/stream', LO, bearer(manageKey), old);
    expect(r.status).toBe(200);
    expect(r.text).toContain('"protocolVersion":"2025-03-26"');
  });

  it('at the session limit, a session idle for a minute gives way to a new one; active ones never do', async () => {
    expect((await call('/api/mcp/stream', LO, bearer(manageKey), initialize)).status).toBe(200);
    const open = (await services.mcp.status()).sessions.length;
    await services.settings.update({ agents: { ...services.settings.get().agents, mcpMaxSessions: open } });
    try {
      expect((await call('/api/mcp/stream', LO, bearer(manageKey), initialize)).status).toBe(503);
      vi.useFakeTimers({ toFake: ['Date'], now: Date.now() + 61_000 });
      const r = await call('/api/mcp/stream', LO, bearer(manageKey), initialize);
      expect(r.status).toBe(200);
      expect((await services.mcp.status()).sessions.length).toBe(open);
      expect((await services.mcp.status()).sessions.some((s) => s.id === r.res.headers.get('mcp-session-id'))).toBe(true);
      // The newcomer is fresh: the next one is refused again unless another has idled.
      if (open === 1) expect((await call('/api/mcp/stream', LO, bearer(manageKey), initialize)).status).toBe(503);
    } finally {
      vi.useRealTimers();
      await services.settings.update({ agents: { ...services.settings.get().agents, mcpMaxSessions: 32 } });
    }
  });

  it('idle sessions expire', async () => {
    const before = (await services.mcp.status()).sessions.length;
    expect(before).toBeGreaterThan(0);
    expect(services.mcp.sweep(Date.now() + services.settings.get().agents.mcpSessionIdleSeconds * 1000 + 120_000)).toBe(before);
    expect((await services.mcp.status()).sessions).toEqual([]);
  });
});

describe('assistant from a non-loopback address', () => {
  const chat = { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ messages: [{ role: 'user', content: 'hi' }] }) };

  it('is refused (even with a manage-scope key) until copilotAllowManageKey is on; then only a manage key passes', async () => {
    expect((await call('/api/copilot/chat', REMOTE, {}, chat)).status).toBe(403);
    expect((await call('/api/copilot/chat', REMOTE, bearer(manageKey), chat)).status).toBe(403);
    await services.settings.update({ copilotAllowManageKey: true });
    try {
      expect((await call('/api/copilot/chat', REMOTE, {}, chat)).status).toBe(403);
      expect((await call('/api/copilot/chat', REMOTE, bearer(proxyKey), chat)).status).toBe(403);
      // Past the tier: no model is configured, so the assistant itself answers 409.
      const r = await call('/api/copilot/chat', REMOTE, bearer(manageKey), chat);
      expect(r.status).toBe(409);
      expect(r.text).toMatch(/assistantModel/);
    } finally {
      await services.settings.update({ copilotAllowManageKey: false });
    }
    // From loopback, management credentials as usual.
    expect((await call('/api/copilot/chat', LO, bearer(manageKey), chat)).status).toBe(409);
    expect((await call('/api/copilot/chat', LO, {}, chat)).status).toBe(401);
  });
});

describe('CLI-tool change log', () => {
  it('is loopback-only like the other CLI-tool runtime routes: a manage key from another address is refused', async () => {
    const change = { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ tool: 'codex', action: 'apply', files: [] }) };
    expect((await call('/api/cli-tools/logs', REMOTE, bearer(manageKey))).status).toBe(403);
    expect((await call('/api/cli-tools/logs', REMOTE, bearer(manageKey), change)).status).toBe(403);
    expect((await call('/api/cli-tools/logs', LO, bearer(manageKey), change)).status).toBe(201);
    const list = await call('/api/cli-tools/logs', LO, bearer(manageKey));
    expect(list.status).toBe(200);
    expect(JSON.parse(list.text).changes).toHaveLength(1);
  });
});
