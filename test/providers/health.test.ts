/**
 * Health tests (issue "Operations" 4): every connection tested at once against its upstream, and a real
 * one-token request through the executor to a model or combo, reporting which target answered.
 */
import { afterAll, beforeAll, beforeEach, expect, it } from 'vitest';
import { startProxyEnv, type ProxyEnv } from '../support/proxy-env.js';
import { runRouter } from '../support/cli.js';
import { script } from '../resilience/helpers.js';

let env: ProxyEnv;
let broken: string;

beforeAll(async () => {
  env = await startProxyEnv([
    { provider: 'openai', apiKey: 'sk-up-openai-0123456789' },
    { provider: 'anthropic', apiKey: 'sk-up-anthropic-0123456789' },
  ]);
  // An account whose upstream refuses connections: port 9 (discard) has no listener here.
  broken = (await env.router.addConnection({ provider: 'groq', name: 'dead groq', apiKey: 'gsk-dead-0123456789', providerSpecificData: { baseUrl: 'http://127.0.0.1:9/v1' } })).id;
  expect((await env.router.manage('POST', '/api/combos', { name: 'health-chain', models: ['groq/llama-x', 'anthropic/claude-sonnet-4-5'] })).status).toBe(201);
}, 60_000);

afterAll(async () => {
  await env?.stop();
});

beforeEach(async () => {
  env.mock.reset();
  script(env.mock);
  await env.router.manage('POST', '/api/resilience/reset', {});
});

it('test-all tests every connection and reports each: ok, latency, models found, the error in words', async () => {
  const r = await env.router.manage('POST', '/api/providers/test-all', {});
  expect(r.status, JSON.stringify(r.json)).toBe(200);
  expect(r.json).toMatchObject({ ok: 2, failed: 1 });
  const byProvider = Object.fromEntries(r.json.results.map((x: { provider: string }) => [x.provider, x]));
  expect(byProvider.openai).toMatchObject({ ok: true, models: expect.any(Number), latencyMs: expect.any(Number) });
  expect(byProvider.anthropic.ok).toBe(true);
  expect(byProvider.groq).toMatchObject({ ok: false, connectionId: broken, name: 'dead groq' });
  // CONTRACT: each result carries {connectionId, provider, ok, latencyMs, models?, error?}.
  for (const x of r.json.results) expect(x).toMatchObject({ connectionId: expect.any(String), provider: expect.any(String), ok: expect.any(Boolean), latencyMs: expect.any(Number) });
  expect(byProvider.groq.error).toMatch(/ECONNREFUSED|refused/i);
  expect(JSON.stringify(r.json)).not.toContain('0123456789');
  const conn = (await env.router.manage('GET', `/api/providers/${broken}`)).json;
  expect(conn).toMatchObject({ testStatus: 'error' });
});

it('models test sends one real request through the executor and names the target that answered', async () => {
  const r = await env.router.manage('POST', '/api/models/test', { model: 'openai/gpt-4o' });
  expect(r.status, JSON.stringify(r.json)).toBe(200);
  expect(r.json).toMatchObject({ ok: true, model: 'openai/gpt-4o', provider: 'openai', served: { model: 'openai/gpt-4o', provider: 'openai' }, tokensIn: expect.any(Number) });
  expect(r.json.costUsd).toBeGreaterThan(0);
  const upstream = env.mock.requests.find((q) => q.path.endsWith('/chat/completions'))!;
  expect(upstream.json.max_tokens ?? upstream.json.max_completion_tokens).toBe(1);
  // It is a real request: its usage row is in the log under its own endpoint.
  const logs = (await env.router.manage('GET', `/api/logs?provider=openai`)).json.logs;
  expect(logs.some((l: { traceId: string; endpoint: string }) => l.traceId === r.json.traceId && l.endpoint === 'models:test')).toBe(true);
});

it('a combo fails over like a client request: the dead first target is skipped, the next one answers', async () => {
  const r = await env.router.manage('POST', '/api/models/test', { model: 'health-chain' });
  expect(r.json).toMatchObject({ ok: true, provider: 'anthropic', served: { provider: 'anthropic', model: 'anthropic/claude-sonnet-4-5' } });
});

it('a failing model is a finding (ok: false, the error in words); an unknown one is a 404', async () => {
  script(env.mock, { 'gpt-broken': { type: 'status', status: 500 } });
  const failing = await env.router.manage('POST', '/api/models/test', { model: 'openai/gpt-broken' });
  expect(failing.status).toBe(200);
  expect(failing.json).toMatchObject({ ok: false, model: 'openai/gpt-broken', provider: 'openai', latencyMs: expect.any(Number) });
  expect(failing.json.error).toMatch(/500/);
  expect((await env.router.manage('POST', '/api/models/test', { model: 'nosuch/model' })).status).toBe(404);
  expect((await env.router.manage('POST', '/api/models/test', {})).status).toBe(400);
});

it('CLI: router providers test --all and router models test <model>', async () => {
  const at = ['--home', env.router.home, '--port', String(env.router.port)];
  const all = await runRouter(['providers', 'test', '--all', ...at]);
  expect(all.exitCode, all.stdout + all.stderr).toBe(1);
  expect(all.stdout).toMatch(/openai.*ok/);
  expect(all.stdout).toMatch(/dead groq.*(refused|ECONNREFUSED)/i);
  const one = await runRouter(['models', 'test', 'openai/gpt-4o', ...at]);
  expect(one.exitCode, one.stdout + one.stderr).toBe(0);
  expect(one.stdout).toMatch(/^ok: openai\/gpt-4o \(account OpenAI\) answered in/);
  const json = await runRouter(['models', 'test', 'health-chain', '--json', ...at]);
  expect(JSON.parse(json.stdout)).toMatchObject({ ok: true, served: { provider: 'anthropic' } });
});
