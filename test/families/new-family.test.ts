// @vitest-isolate: registers a fixture family in the module-level family registry, which golden.test.ts reads.
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { families } from '../../src/daemon/families/registry.js';
import type { Services } from '../../src/daemon/services.js';
import { tokenizeFamily } from './fixture-family/index.js';

/**
 * A new endpoint family is its folder (test/families/fixture-family/) plus one registry line: registered
 * here with that one line before the daemon is built, it gets its client route and runs end to end through
 * the executor (plan, accounts in priority order, failover on a 503 to the next account, cooldowns, the
 * usage row of each attempt, the reply's headers), against a mock upstream on loopback and the real daemon
 * services and SQLite, in process.
 */
families.push(tokenizeFamily);
const { bootServices, buildApp, closeServices } = await import('../../src/daemon/boot.js');

let home: string;
let services: Services;
let app: ReturnType<typeof buildApp>;
let upstream: Server;
const calls: { auth: string; body: any }[] = [];

beforeAll(async () => {
  // Account A answers 503 (overloaded), account B tokenizes.
  upstream = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      calls.push({ auth: String(req.headers.authorization), body: JSON.parse(body) });
      if (req.url !== '/v1/tokenize') return res.writeHead(404).end();
      if (req.headers.authorization === 'Bearer sk-account-a') {
        res.writeHead(503, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { message: 'overloaded', type: 'server_error' } }));
        return;
      }
      const text = JSON.parse(body).text as string;
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ tokens: text.split(' ').map((_, i) => i + 100) }));
    });
  });
  await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', r));
  const base = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}/v1`;
  home = mkdtempSync(join(tmpdir(), 'router-new-family-'));
  services = await bootServices({ home, host: '127.0.0.1', port: 0 });
  app = buildApp(services);
  for (const [name, apiKey, priority] of [['a', 'sk-account-a', 1], ['b', 'sk-account-b', 2]] as const) {
    const r = await send('POST', '/api/providers', { provider: 'openai', name, apiKey, priority, providerSpecificData: { baseUrl: base } }, { 'x-router-cli-token': services.cliToken });
    expect(r.status, JSON.stringify(r.json)).toBe(201);
  }
});
afterAll(async () => {
  if (services) closeServices(services);
  if (home) rmSync(home, { recursive: true, force: true });
  await new Promise((r) => upstream?.close(r));
});

async function send(method: string, path: string, body: unknown, headers: Record<string, string> = {}) {
  const res = await app.request(`http://router.test${path}`, { method, headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) }, { remoteAddress: '127.0.0.1' });
  // Every reply of this test is JSON: the family's, or the standard error body.
  const json: any = await res.json();
  return { status: res.status, json, headers: res.headers };
}

describe('a new endpoint family: one folder, one registry line', () => {
  it('is served on its route through the executor: account A fails with 503, account B answers', async () => {
    const key = await services.keys.create('caller', ['proxy']);
    const r = await send('POST', '/v1/fixture/tokenize', { model: 'openai/tok-1', text: 'one two three' }, { authorization: `Bearer ${key.key}` });
    expect(r.status, JSON.stringify(r.json)).toBe(200);
    expect(r.json).toEqual({ object: 'tokenization', model: 'openai/tok-1', count: 3, tokens: [100, 101, 102] });
    expect(calls.map((c) => c.auth)).toEqual(['Bearer sk-account-a', 'Bearer sk-account-b']);
    expect(calls[1]!.body).toEqual({ model: 'tok-1', text: 'one two three' });
    // The one Reply stamps every header.
    const trace = r.headers.get('x-router-trace-id');
    expect(trace).toMatch(/^[0-9a-f-]{36}$/);
    expect(r.headers.get('x-router-version')).toBe(services.version);
    expect(r.headers.get('server-timing')).toMatch(/^router;dur=[\d.]+, upstream;dur=[\d.]+$/);
    // Each attempt has its usage row under the family's endpoint: the 503 on A, the served one on B.
    services.usage.flush();
    const rows = services.db.prepare('SELECT status, endpoint, tokens_in AS tokens FROM usage_log WHERE trace_id = ? ORDER BY id').all(trace) as any[];
    expect(rows).toEqual([
      { status: 503, endpoint: '/v1/fixture/tokenize', tokens: 0 },
      { status: 200, endpoint: '/v1/fixture/tokenize', tokens: 3 },
    ]);
  });

  it('a bad body is the codec 400 in the standard error body; no upstream is called', async () => {
    const key = await services.keys.create('caller2', ['proxy']);
    const before = calls.length;
    const r = await send('POST', '/v1/fixture/tokenize', { model: 'openai/tok-1', text: 7 }, { authorization: `Bearer ${key.key}` });
    expect(r.status).toBe(400);
    expect(r.json.error).toMatchObject({ message: "'text' must be a string.", param: 'text' });
    expect(typeof r.json.error.type).toBe('string');
    expect(calls.length).toBe(before);
  });
});
