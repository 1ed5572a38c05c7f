/**
 * Cloud sync between two real daemons (A pushes and pulls, B is its remote), and against a fake remote
 * that tampers with its replies: nothing unsigned or wrongly signed is applied, and remote credentials
 * land only with overwriteCredentials on.
 */
import { createHmac } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startMockUpstream, type MockUpstream } from '../mocks/upstream.js';
import { startRouter, type RouterProcess } from '../support/router-daemon.js';
import { describeResult, runRouter } from '../support/cli.js';

const SECRET = 'a-shared-sync-secret-of-both-machines';
let mock: MockUpstream;
let a: RouterProcess;
let b: RouterProcess;
let bKey: string;

async function chat(r: RouterProcess, key: string, model: string): Promise<number> {
  const res = await fetch(`${r.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model, messages: [{ role: 'user', content: 'hi' }] }),
  });
  await res.text();
  return res.status;
}

async function sync(r: RouterProcess, action: string) {
  return r.manage('POST', '/api/sync/cloud', { action });
}

async function state(r: RouterProcess) {
  const [providers, combos, settings] = await Promise.all([r.manage('GET', '/api/providers'), r.manage('GET', '/api/combos'), r.manage('GET', '/api/settings')]);
  return { connections: providers.json.connections, combos: combos.json.combos, settings: settings.json };
}

beforeAll(async () => {
  mock = await startMockUpstream({ requireKey: 'sk-upstream-a' });
  [a, b] = await Promise.all([startRouter(), startRouter()]);
  bKey = await b.createKey();
  await a.addConnection({ provider: 'openai', name: 'work', apiKey: 'sk-upstream-a', providerSpecificData: { baseUrl: mock.openaiBase } });
  expect((await a.manage('POST', '/api/combos', { name: 'fast', models: ['openai/gpt-4o'] })).status).toBe(201);
  await a.manage('PATCH', '/api/settings', { cloudSync: { url: `${b.url}/api/sync/cloud/remote`, secret: SECRET, enabled: true }, cacheTtlSeconds: 1234 });
  await b.manage('PATCH', '/api/settings', { cloudSync: { url: '', secret: SECRET, enabled: true } });
});
afterAll(async () => {
  await Promise.all([a?.stop(), b?.stop()]);
  await mock?.close();
});

describe('two routers', () => {
  it('push: B gets the combo and settings; the connection arrives without credentials (opt-in off)', async () => {
    const r = await sync(a, 'push');
    expect(r.status, JSON.stringify(r.json)).toBe(200);
    const changes = r.json.report.changes;
    expect(changes).toContainEqual({ kind: 'combo', name: 'fast', result: 'created' });
    expect(changes).toContainEqual(expect.objectContaining({ kind: 'connection', name: 'openai/work', result: 'created', reason: expect.stringMatching(/credentials need re-entry/) }));
    expect(changes).toContainEqual({ kind: 'setting', name: 'cacheTtlSeconds', result: 'updated' });
    const s = await state(b);
    expect(s.combos.map((c: any) => c.name)).toContain('fast');
    expect(s.settings.cacheTtlSeconds).toBe(1234);
    const conn = s.connections.find((c: any) => c.name === 'work');
    expect(conn).toMatchObject({ provider: 'openai', isActive: false });
    // The upstream key never reached B: its request cannot authenticate.
    expect(await chat(b, bKey, 'fast')).not.toBe(200);
  });

  it('with overwriteCredentials on, the tokens from the remote land and B can use them', async () => {
    await b.manage('PATCH', '/api/settings', { cloudSync: { url: '', secret: SECRET, enabled: true, overwriteCredentials: true } });
    // The connection names its own base URL (the mock): an endpoint, which needs the second opt-in too.
    const held = await sync(a, 'push');
    expect(held.json.report.changes).toContainEqual({ kind: 'connection', name: 'openai/work', result: 'skipped', reason: expect.stringMatching(/endpoint \(baseUrl\).*applySecurityChanges/) });
    expect(await chat(b, bKey, 'fast')).not.toBe(200);
    await b.manage('PATCH', '/api/settings', { cloudSync: { url: '', secret: SECRET, enabled: true, overwriteCredentials: true, applySecurityChanges: true } });
    const r = await sync(a, 'push');
    expect(r.json.report.changes).toContainEqual({ kind: 'connection', name: 'openai/work', result: 'updated' });
    expect(await chat(b, bKey, 'fast')).toBe(200);
    // Nothing changed since: a second push reports everything unchanged.
    const again = await sync(a, 'push');
    expect(again.json.report.changes).toEqual([]);
    expect(again.json.report.unchanged).toBeGreaterThan(0);
  });

  it('pull: a change made on B comes to A; a newer local change is kept and reported', async () => {
    const bCombo = (await b.manage('GET', '/api/combos')).json.combos.find((c: any) => c.name === 'fast');
    await b.manage('PUT', `/api/combos/${bCombo.id}`, { name: 'fast', models: ['openai/gpt-4o', 'openai/gpt-4o-mini'] });
    await b.manage('PATCH', '/api/settings', { cacheTtlSeconds: 999 });
    await new Promise((r) => setTimeout(r, 20));
    await a.manage('PATCH', '/api/settings', { cacheTtlSeconds: 4321 }); // newer here than on B
    const r = await sync(a, 'pull');
    expect(r.status, JSON.stringify(r.json)).toBe(200);
    expect(r.json.report.changes).toContainEqual({ kind: 'combo', name: 'fast', result: 'updated' });
    expect(r.json.report.changes).toContainEqual({ kind: 'setting', name: 'cacheTtlSeconds', result: 'kept-local', reason: 'changed here more recently' });
    const s = await state(a);
    expect(s.combos.find((c: any) => c.name === 'fast').models.map((m: any) => m.model ?? m)).toEqual(['openai/gpt-4o', 'openai/gpt-4o-mini']);
    expect(s.settings.cacheTtlSeconds).toBe(4321);
  });

  it('status reports the remote and the last sync; the secret is never shown', async () => {
    const r = await sync(a, 'status');
    expect(r.json.remote.counts).toMatchObject({ connections: 1, combos: 1 });
    expect(r.json.lastSync.action).toBe('pull');
    const s = await a.manage('GET', '/api/settings');
    expect(s.json.cloudSync.secret).not.toContain(SECRET);
  });

  it('router sync push|status print the report and the remote', async () => {
    const cli = (action: string) => runRouter(['sync', action, '--home', a.home, '--port', String(a.port)]);
    const push = await cli('push');
    expect(push.exitCode, describeResult(push)).toBe(0);
    expect(push.stdout).toMatch(/nothing to change on the remote|push done/);
    const status = await cli('status');
    expect(status.exitCode, describeResult(status)).toBe(0);
    expect(status.stdout).toMatch(/remote snapshot: .*1 connections/);
  });

  it('the remote refuses a request with a wrong signature, and changes nothing', async () => {
    const before = await state(b);
    const body = JSON.stringify({ action: 'push', sentAt: new Date().toISOString(), snapshot: { format: 'router-sync/2' } });
    const res = await fetch(`${b.url}/api/sync/cloud/remote`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-cloud-sig': `sha256=${createHmac('sha256', 'another-secret-entirely!!').update(body).digest('hex')}` },
      body,
    });
    expect(res.status).toBe(401);
    expect(await state(b)).toEqual(before);
  });
});

describe('a remote that tampers', () => {
  let fake: Server;
  let mode: 'tampered' | 'wrong-secret' | 'unsigned' = 'tampered';
  const good = () => {
    const snapshot = {
      format: 'router-sync/2', exportedAt: new Date().toISOString(), routerVersion: 'x', connections: [], nodes: [], keys: [],
      combos: [{ name: 'evil', strategy: 'priority', models: ['openai/gpt-4o'], targetTimeoutMs: null, updatedAt: new Date().toISOString() }],
      settings: { cacheTtlSeconds: { value: 7, updatedAt: new Date(Date.now() + 60_000).toISOString() } },
    };
    return JSON.stringify({ snapshot });
  };
  beforeAll(async () => {
    fake = createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        const body = good();
        const sig = (secret: string, text: string) => `sha256=${createHmac('sha256', secret).update(text).digest('hex')}`;
        const headers: Record<string, string> = { 'content-type': 'application/json' };
        if (mode === 'tampered') {
          headers['x-cloud-sig'] = sig(SECRET, body);
          res.writeHead(200, headers).end(body.replace('"evil"', '"evi1"')); // one byte changed after signing
        } else if (mode === 'wrong-secret') {
          headers['x-cloud-sig'] = sig('not-the-shared-secret-at-all', body);
          res.writeHead(200, headers).end(body);
        } else res.writeHead(200, headers).end(body);
      });
    });
    await new Promise<void>((r) => fake.listen(0, '127.0.0.1', r));
    await a.manage('PATCH', '/api/settings', { cloudSync: { url: `http://127.0.0.1:${(fake.address() as AddressInfo).port}/sync`, secret: SECRET, enabled: true } });
  });
  afterAll(async () => {
    await new Promise((r) => fake.close(r));
  });

  it.each(['tampered', 'wrong-secret', 'unsigned'] as const)('a %s reply is refused and nothing changes', async (m) => {
    mode = m;
    const before = await state(a);
    const r = await sync(a, 'pull');
    expect(r.status).toBe(502);
    expect(r.json.error.message).toMatch(/signature is missing or wrong.*nothing was applied/);
    expect(await state(a)).toEqual(before);
  });
});
