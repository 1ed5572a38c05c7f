/**
 * Issue 27 item 11: names everywhere. Keys, provider nodes and connections are named the way people name
 * them, in the request log (`router logs --key <name>`, the live feed), `router providers reset <node
 * prefix>`, the circuit-open error body, the daemon log, the inspector's lines and the diversity route; a
 * duplicate key name is refused by the management route itself. The real CLI and daemon, a mock upstream.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { detailLines } from '../../src/cli/tui/inspect-text.js';
import { startMockUpstream, type MockUpstream } from '../mocks/upstream.js';
import { BIN, describeResult, REPO_ROOT, runRouter } from '../support/cli.js';
import { chatAs, startRouter, type RouterProcess } from '../support/router-daemon.js';

let router: RouterProcess;
let mock: MockUpstream;
let nodeId: string;
let connId: string;
const keys: Record<string, { id: string; key: string }> = {};

const R = (...args: string[]) => runRouter([...args, '--home', router.home, '--port', String(router.port)]);

const chat = (key: string, model: string) => chatAs(router.url, key, model);

beforeAll(async () => {
  mock = await startMockUpstream();
  router = await startRouter();
  const node = await router.manage('POST', '/api/provider-nodes', { name: 'Box', prefix: 'box', type: 'openai-compatible', baseUrl: mock.openaiBase });
  expect(node.status, JSON.stringify(node.json)).toBe(201);
  nodeId = node.json.id;
  connId = (await router.addConnection({ provider: 'box', name: 'work', apiKey: 'sk-box-1' })).id;
  for (const name of ['alice', 'bob']) {
    const r = await router.manage('POST', '/api/keys', { name, scopes: ['proxy'] });
    expect(r.status).toBe(201);
    keys[name] = { id: r.json.id, key: r.json.key };
  }
}, 30_000);

afterAll(async () => {
  await router?.stop();
  await mock?.close();
});

describe('a key is named by its name', () => {
  it('router logs --key <name> shows that key\'s requests; an unknown name says so', async () => {
    expect((await chat(keys.alice!.key, 'box/m1')).status).toBe(200);
    expect((await chat(keys.bob!.key, 'box/m1')).status).toBe(200);
    expect((await chat(keys.bob!.key, 'box/m1')).status).toBe(200);
    const byName = await R('logs', '--key', 'alice', '--json');
    expect(byName.exitCode, describeResult(byName)).toBe(0);
    const logs = JSON.parse(byName.stdout) as any[];
    expect(logs.map((l) => l.apiKeyId)).toEqual([keys.alice!.id]);
    expect(logs[0]).toMatchObject({ apiKeyName: 'alice', connectionName: 'work', provider: 'box' });
    expect(JSON.parse((await R('logs', '--key', 'bob', '--json')).stdout)).toHaveLength(2);
    // The id still works.
    expect(JSON.parse((await R('logs', '--key', keys.alice!.id, '--json')).stdout)).toHaveLength(1);

    const unknown = await R('logs', '--key', 'carol');
    expect(unknown.exitCode, describeResult(unknown)).toBe(1);
    expect(unknown.stderr).toBe("router: No API key has the name or id 'carol'.");
    const api = await router.manage('GET', '/api/logs?key=carol');
    expect(api.status).toBe(404);
    expect(api.json.error).toMatchObject({ code: 'key_not_found', param: 'key' });
  });

  it('router logs -f --key <name> follows that key, each line with key and connection names', async () => {
    const child = execa(process.execPath, [BIN, 'logs', '-f', '--json', '--key', 'alice', '--home', router.home, '--port', String(router.port)], {
      cwd: REPO_ROOT,
      reject: false,
      stdin: 'ignore',
      env: { ROUTER_HOME: '', NODE_OPTIONS: '' },
    });
    const lines: any[] = [];
    child.stdout!.on('data', (d: Buffer) => {
      for (const l of d.toString().split('\n')) if (l.trim()) lines.push(JSON.parse(l));
    });
    try {
      const deadline = Date.now() + 10_000;
      while (lines.length < 1 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
      expect(lines).toHaveLength(1);
      // Live: bob's request is filtered out, alice's arrives with names.
      await chat(keys.bob!.key, 'box/m2');
      await chat(keys.alice!.key, 'box/m2');
      while (lines.length < 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
      expect(lines.map((l) => l.apiKeyId)).toEqual([keys.alice!.id, keys.alice!.id]);
      expect(lines[1]).toMatchObject({ model: 'm2', provider: 'box', apiKeyName: 'alice', connectionName: 'work' });
    } finally {
      child.kill('SIGINT');
      await child;
    }
  });

  it('the inspector shows the key and connection by name', async () => {
    const [entry] = (await router.manage('GET', '/api/logs?key=alice&limit=1')).json.logs;
    const text = detailLines(entry, { kind: 'unavailable' }, 'request', 120).join('\n');
    expect(text).toMatch(/api key\s+alice\s+connection work/);
    expect(text).not.toContain(keys.alice!.id);
    expect(text).not.toContain(connId);
  });

  it('a duplicate key name is refused by the route (409), for every client; allowDuplicateName overrides', async () => {
    const dup = await router.manage('POST', '/api/keys', { name: 'alice' });
    expect(dup.status).toBe(409);
    expect(dup.json.error).toMatchObject({ code: 'key_name_taken', param: 'name', message: `An API key named 'alice' already exists (${keys.alice!.id}); choose another name.` });
    const rename = await router.manage('PATCH', `/api/keys/${keys.bob!.id}`, { name: 'alice' });
    expect(rename.status).toBe(409);
    // Renaming a key to its own name is no conflict.
    expect((await router.manage('PATCH', `/api/keys/${keys.alice!.id}`, { name: 'alice' })).status).toBe(200);
    const forced = await router.manage('POST', '/api/keys', { name: 'alice', allowDuplicateName: true });
    expect(forced.status).toBe(201);
    // Two keys share the name now: a filter by it is ambiguous, not a guess.
    const amb = await router.manage('GET', '/api/logs?key=alice');
    expect(amb.status).toBe(400);
    expect(amb.json.error.code).toBe('ambiguous_key_name');
    expect((await router.manage('DELETE', `/api/keys/${forced.json.id}`)).status).toBe(204);
  });
});

describe('a provider node is named by its prefix, a connection by its name', () => {
  it('providers reset <prefix> closes the node\'s open circuit; the error body and the daemon log say box, not the UUID', async () => {
    expect((await router.manage('PATCH', '/api/settings', { breakerFailureThreshold: 1 })).status).toBe(200);
    mock.enqueue({ type: 'status', status: 500, message: 'boom' });
    expect((await chat(keys.bob!.key, 'box/broken')).status).toBe(500);
    const refused = await chat(keys.bob!.key, 'box/broken');
    expect(refused.status).toBe(503);
    expect(refused.json.error).toMatchObject({ code: 'provider_circuit_open', provider: 'box' });
    expect(refused.json.error.message).toMatch(/^Model broken of provider box is temporarily unavailable/);
    expect(JSON.stringify(refused.json)).not.toContain(nodeId);

    const reset = await R('providers', 'reset', 'box');
    expect(reset.exitCode, describeResult(reset)).toBe(0);
    expect(reset.stdout).toBe('closed 1 circuit of box');
    const { breakers } = (await router.manage('GET', '/api/resilience')).json;
    expect(breakers.filter((b: any) => b.providerId === nodeId && b.state !== 'closed')).toEqual([]);
    expect((await chat(keys.bob!.key, 'box/broken')).status).toBe(200);
    expect((await R('providers', 'reset', 'box')).stdout).toBe('no circuit of box was open');
    const unknown = await R('providers', 'reset', 'nobox');
    expect([unknown.exitCode, unknown.stderr]).toEqual([1, "router: no such provider 'nobox'; see `router providers catalog` and `router providers nodes list`"]);

    const log = readFileSync(join(router.home, 'router.log'), 'utf8');
    const breakerLines = log.split('\n').filter((l) => l.includes('circuit breaker'));
    expect(breakerLines.length).toBeGreaterThan(0);
    for (const l of breakerLines) {
      expect(l).toContain('box');
      expect(l).not.toContain(nodeId);
    }
    expect((await router.manage('PATCH', '/api/settings', { breakerFailureThreshold: 5 })).status).toBe(200);
  });

  it('the diversity route keys groups and shares by node prefix and connection name', async () => {
    const q = `bucket=hour&from=${Date.now() - 3_600_000}`;
    const byProvider = (await router.manage('GET', `/api/analytics/diversity?by=provider&${q}`)).json;
    expect(byProvider.groups.map((g: any) => [g.key, g.label, g.providerId])).toEqual([['box', 'box', nodeId]]);
    const byAccount = (await router.manage('GET', `/api/analytics/diversity?by=account&${q}`)).json;
    // Requests no connection served (refused by the open circuit) are the null group.
    expect(byAccount.groups.filter((g: any) => g.key !== null).map((g: any) => [g.key, g.connectionId])).toEqual([['work', connId]]);
    const byModel = (await router.manage('GET', `/api/analytics/diversity?by=model&${q}`)).json;
    for (const g of byModel.groups) expect(g.key).toMatch(/^box\//);
    for (const r of [byProvider, byAccount, byModel]) {
      const text = JSON.stringify(r.series);
      expect(text).not.toContain(nodeId);
      expect(text).not.toContain(connId);
    }
  });
});
