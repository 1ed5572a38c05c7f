/**
 * Subsystems load on first use (issue 33 item 2): a daemon that serves no MCP session, no A2A request, no
 * trace export, no agent discovery or keychain read and no skill or vault note never loads the MCP SDK,
 * the A2A SDK (with jose), the OpenTelemetry SDK and exporters, execa or yaml (prom-client itself needs
 * `@opentelemetry/api`). The real daemon process runs with a module-load
 * recorder (test/support/record-loads.mjs); the first MCP session then loads the MCP SDK.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRouter, type RouterProcess } from '../support/router-daemon.js';

const dir = mkdtempSync(join(tmpdir(), 'router-loads-'));
const loads = join(dir, 'loads.txt');
let router: RouterProcess;

const loaded = (pkg: string) => readFileSync(loads, 'utf8').split('\n').some((u) => u.includes(`/node_modules/${pkg}/`));

beforeAll(async () => {
  router = await startRouter({
    env: { ROUTER_TEST_LOADS: loads, NODE_OPTIONS: `--import=${new URL('../support/record-loads.mjs', import.meta.url).href}` },
  });
}, 60_000);

afterAll(async () => {
  await router?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe('subsystems load on first use', () => {
  it('an idle daemon has loaded none of the optional subsystems, and the recorder sees what it did load', async () => {
    expect((await router.manage('GET', '/api/health')).status).toBe(200);
    expect((await router.manage('GET', '/api/settings')).status).toBe(200);
    // The recorder works: what every daemon needs is in the list.
    expect(loaded('h3')).toBe(true);
    expect(loaded('better-sqlite3')).toBe(true);
    for (const pkg of ['@modelcontextprotocol/sdk', '@a2a-js/sdk', 'jose', '@opentelemetry/core', '@opentelemetry/sdk-trace-base', '@opentelemetry/exporter-trace-otlp-proto', 'execa', 'yaml', 'pg', 'ioredis']) {
      expect(loaded(pkg), pkg).toBe(false);
    }
  });

  it('the first MCP session loads the MCP SDK', async () => {
    const key = await router.createKey(['manage']);
    const res = await fetch(`${router.url}/api/mcp/stream`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } } }),
    });
    expect(res.status).toBe(200);
    await res.text();
    expect(loaded('@modelcontextprotocol/sdk')).toBe(true);
  });
});
