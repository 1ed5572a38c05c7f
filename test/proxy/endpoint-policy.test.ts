/**
 * Router's policy holds on every endpoint that calls an upstream (issue 14 "One executor"): chat in each
 * client format, legacy completions, embeddings and count_tokens all enforce a key's model scopes, its
 * daily request quota, the circuit breaker and account cooldowns, write a usage row, and never hand an
 * upstream credential back to the client. In-process daemon, real HTTP to the mock upstream.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { bootServices, buildApp, closeServices } from '../../src/daemon/boot.js';
import type { Services } from '../../src/daemon/services.js';
import { startMockUpstream, type MockUpstream } from '../mocks/upstream.js';
import type { Behavior } from '../mocks/types.js';

let home: string;
let services: Services;
let app: ReturnType<typeof buildApp>;
let mock: MockUpstream;
let proxyKey: string;

const SECRETS = { openai: 'sk-openai-SECRET-0123456789abcdef', anthropic: 'sk-ant-SECRET-0123456789abcdef', gemini: 'AIzaSECRET0123456789abcdef' };

beforeAll(async () => {
  mock = await startMockUpstream();
  home = mkdtempSync(join(tmpdir(), 'router-endpoint-policy-'));
  services = await bootServices({ home, host: '127.0.0.1', port: 0 });
  app = buildApp(services);
  proxyKey = (await services.keys.create('caller', ['proxy'])).key;
  const bases = { openai: mock.openaiBase, anthropic: mock.anthropicBase, gemini: mock.geminiBase };
  for (const provider of ['openai', 'anthropic', 'gemini'] as const) {
    const r = await send('POST', '/api/providers', { provider, apiKey: SECRETS[provider], providerSpecificData: { baseUrl: bases[provider] } }, MANAGE);
    expect(r.status, JSON.stringify(r.json)).toBe(201);
  }
});
afterEach(() => mock.reset());
afterAll(async () => {
  if (services) closeServices(services);
  if (home) rmSync(home, { recursive: true, force: true });
  await mock?.close();
});

const MANAGE = { manage: 'yes' };
async function send(method: string, path: string, body: unknown, headers: Record<string, string> = {}) {
  if (headers === MANAGE) headers = { 'x-router-cli-token': services.cliToken };
  const res = await app.request(
    `http://router.test${path}`,
    { method, headers: { ...(body !== undefined ? { 'content-type': 'application/json' } : {}), ...headers }, body: body === undefined ? undefined : JSON.stringify(body) },
    { remoteAddress: '127.0.0.1' },
  );
  const text = await res.text();
  let json: any;
  try {
    json = text ? JSON.parse(text) : undefined;
  } catch {
    json = undefined;
  }
  return { status: res.status, json, text, headers: res.headers };
}

/** One endpoint under test: the provider it reaches and the request naming a model of that provider. */
interface Endpoint {
  name: string;
  provider: 'openai' | 'anthropic' | 'gemini';
  request(model: string): { path: string; body: Record<string, unknown> };
}

const ENDPOINTS: Endpoint[] = [
  { name: 'chat completions', provider: 'openai', request: (m) => ({ path: '/v1/chat/completions', body: { model: `openai/${m}`, messages: [{ role: 'user', content: 'hi' }] } }) },
  { name: 'messages', provider: 'anthropic', request: (m) => ({ path: '/v1/messages', body: { model: `anthropic/${m}`, max_tokens: 50, messages: [{ role: 'user', content: 'hi' }] } }) },
  { name: 'messages to an openai target', provider: 'openai', request: (m) => ({ path: '/v1/messages', body: { model: `openai/${m}`, max_tokens: 50, messages: [{ role: 'user', content: 'hi' }] } }) },
  { name: 'responses', provider: 'openai', request: (m) => ({ path: '/v1/responses', body: { model: `openai/${m}`, input: 'hi' } }) },
  { name: 'gemini generateContent', provider: 'gemini', request: (m) => ({ path: `/v1beta/models/gemini/${m}:generateContent`, body: { contents: [{ role: 'user', parts: [{ text: 'hi' }] }] } }) },
  { name: 'legacy completions', provider: 'openai', request: (m) => ({ path: '/v1/completions', body: { model: `openai/${m}`, prompt: 'Say hi' } }) },
  { name: 'embeddings', provider: 'openai', request: (m) => ({ path: '/v1/embeddings', body: { model: `openai/${m}`, input: 'hello' } }) },
  { name: 'count_tokens', provider: 'anthropic', request: (m) => ({ path: '/v1/messages/count_tokens', body: { model: `anthropic/${m}`, messages: [{ role: 'user', content: 'hi' }] } }) },
];

/** A model name unique to one test and endpoint, so circuits, cooldowns and rows never mix. */
function modelFor(test: string, ep: Endpoint): string {
  return `${test}-${ep.name.replace(/\W+/g, '-')}`;
}

function call(ep: Endpoint, model: string, key = proxyKey) {
  const { path, body } = ep.request(model);
  return send('POST', path, body, { authorization: `Bearer ${key}` });
}

/** Answers `behavior` to every request for `model`, on any endpoint. */
function answer(model: string, behavior: Behavior): void {
  mock.handle((req) => (req.model === model ? behavior : undefined));
}

const hitsFor = (model: string) => mock.requests.filter((r) => r.model === model).length;

async function rowsFor(model: string): Promise<any[]> {
  const r = await send('GET', '/api/logs?limit=500', undefined, MANAGE);
  expect(r.status).toBe(200);
  return (r.json.logs as any[]).filter((l) => l.model === model);
}

/**
 * Router's code for a refusal, wherever the client's format keeps it: the standard body's (and Anthropic's)
 * `error.code`; on Gemini routes, Google's `error.code` is the HTTP status and router's code is the
 * `reason` of the ErrorInfo in `error.details`.
 */
function routerCode(body: any): unknown {
  return typeof body.error.code === 'number' ? body.error.details?.[0]?.reason : body.error.code;
}

describe.each(ENDPOINTS)('$name', (ep) => {
  it('a key scoped to other models is refused with 403 before any upstream call', async () => {
    const model = modelFor('scope', ep);
    const key = (await services.keys.create('scoped', ['proxy', `model:${ep.provider}/allowed-*`])).key;
    const r = await call(ep, model, key);
    expect(r.status, r.text).toBe(403);
    expect(routerCode(r.json)).toBe('model_not_allowed');
    expect(hitsFor(model)).toBe(0);
  });

  it('a key over its daily request quota is refused with 429', async () => {
    const model = modelFor('quota', ep);
    const created = await send('POST', '/api/keys', { name: `quota ${ep.name}`, dailyRequestLimit: 1 }, MANAGE);
    const key = created.json.key as string;
    expect((await call(ep, model, key)).status).toBe(200);
    const over = await call(ep, model, key);
    expect(over.status, over.text).toBe(429);
    expect(routerCode(over.json)).toBe('daily_request_limit');
    expect(hitsFor(model)).toBe(1);
  });

  it('writes a usage row for a served request', async () => {
    const model = modelFor('usage', ep);
    const r = await call(ep, model);
    expect(r.status, r.text).toBe(200);
    await expect.poll(async () => (await rowsFor(model)).length).toBe(1);
    const [row] = await rowsFor(model);
    expect(row).toMatchObject({ provider: ep.provider, model, status: 200 });
  });

  it('upstream 5xx replies open the circuit: then 503 provider_circuit_open without calling the upstream', async () => {
    const model = modelFor('breaker', ep);
    answer(model, { type: 'status', status: 500, message: 'internal failure' });
    for (let i = 0; i < services.resilience.breakers.settings.failureThreshold; i++) {
      const r = await call(ep, model);
      expect(r.status, r.text).toBe(500);
    }
    const before = hitsFor(model);
    const refused = await call(ep, model);
    expect(refused.status, refused.text).toBe(503);
    expect(routerCode(refused.json)).toBe('provider_circuit_open');
    expect(refused.headers.get('retry-after')).toMatch(/^\d+$/);
    expect(hitsFor(model)).toBe(before);
  });

  it('a 429 with Retry-After cools the account: the next request is 429 model_cooldown without calling the upstream', async () => {
    const model = modelFor('cooldown', ep);
    answer(model, { type: 'status', status: 429, message: 'slow down', headers: { 'retry-after': '120' } });
    const first = await call(ep, model);
    expect(first.status, first.text).toBe(429);
    const before = hitsFor(model);
    const cooled = await call(ep, model);
    expect(cooled.status, cooled.text).toBe(429);
    expect(routerCode(cooled.json)).toBe('model_cooldown');
    expect(Number(cooled.headers.get('retry-after'))).toBeGreaterThan(100);
    expect(hitsFor(model)).toBe(before);
  });

  it('an upstream error quoting the credential never reaches the client whole', async () => {
    const model = modelFor('redact', ep);
    answer(model, { type: 'status', status: 400, message: `Incorrect API key provided: ${SECRETS[ep.provider]}.` });
    const r = await call(ep, model);
    expect(r.status).toBe(400);
    expect(r.text).not.toContain(SECRETS[ep.provider]);
    expect(JSON.stringify([...r.headers])).not.toContain(SECRETS[ep.provider]);
  });
});
