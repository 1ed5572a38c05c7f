/**
 * Fallback chains are priority combos seen through /api/fallback-chains (decision in docs/combos.md): the
 * same records, created, replaced and deleted there, addressed by name in requests, failing over in order.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startProxyEnv, type ProxyEnv } from '../support/proxy-env.js';
import { script } from '../resilience/helpers.js';

let env: ProxyEnv;

beforeAll(async () => {
  env = await startProxyEnv([
    { provider: 'openai', apiKey: 'sk-up-openai-0123456789' },
    { provider: 'anthropic', apiKey: 'sk-up-anthropic-0123456789' },
  ]);
}, 60_000);
afterAll(async () => {
  await env?.stop();
});

async function chat(model: string) {
  const res = await fetch(`${env.router.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${env.key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model, messages: [{ role: 'user', content: 'hi' }] }),
  });
  return { status: res.status, json: await res.json() };
}

it('a chain is a priority combo: created here, listed in both places, served in order with failover', async () => {
  const created = await env.router.manage('POST', '/api/fallback-chains', { name: 'safe-chain', models: ['openai/gpt-broken', 'anthropic/claude-sonnet-4-5'] });
  expect(created.status, JSON.stringify(created.json)).toBe(201);
  expect(created.json).toMatchObject({ name: 'safe-chain', models: [{ model: 'openai/gpt-broken' }, { model: 'anthropic/claude-sonnet-4-5' }] });
  expect(created.json.strategy).toBeUndefined();
  const combo = await env.router.manage('GET', `/api/combos/${created.json.id}`);
  expect(combo.json.strategy).toBe('priority');
  expect((await env.router.manage('GET', '/api/fallback-chains')).json.chains.map((c: { name: string }) => c.name)).toEqual(['safe-chain']);

  env.mock.reset();
  script(env.mock, { 'gpt-broken': { type: 'status', status: 500 } });
  const r = await chat('safe-chain');
  expect(r.status).toBe(200);
  expect(r.json.choices[0].message.content).toBe('served by claude-sonnet-4-5');
});

it('combos of other strategies are not chains; a chain cannot be given another strategy here', async () => {
  const rr = await env.router.manage('POST', '/api/combos', { name: 'spread', strategy: 'round-robin', models: ['openai/gpt-4o', 'anthropic/claude-sonnet-4-5'] });
  expect(rr.status).toBe(201);
  expect((await env.router.manage('GET', `/api/fallback-chains/${rr.json.id}`)).status).toBe(404);
  expect((await env.router.manage('GET', '/api/fallback-chains')).json.chains.map((c: { name: string }) => c.name)).not.toContain('spread');
  const bad = await env.router.manage('POST', '/api/fallback-chains', { name: 'x-chain', strategy: 'random', models: ['openai/gpt-4o'] });
  expect(bad.status).toBe(400);
  expect(bad.json.error.message).toMatch(/strategy/);
});

it('replace and delete; a chain another combo uses cannot be deleted (409)', async () => {
  const c = await env.router.manage('POST', '/api/fallback-chains', { name: 'inner-chain', models: ['openai/gpt-4o'] });
  const put = await env.router.manage('PUT', `/api/fallback-chains/${c.json.id}`, { name: 'inner-chain', models: ['anthropic/claude-sonnet-4-5', 'openai/gpt-4o'], targetTimeoutMs: 5000 });
  expect(put.status).toBe(200);
  expect(put.json).toMatchObject({ targetTimeoutMs: 5000, models: [{ model: 'anthropic/claude-sonnet-4-5' }, { model: 'openai/gpt-4o' }] });
  expect((await env.router.manage('POST', '/api/combos', { name: 'outer', models: ['inner-chain'] })).status).toBe(201);
  expect((await env.router.manage('DELETE', `/api/fallback-chains/${c.json.id}`)).status).toBe(409);
  const outer = (await env.router.manage('GET', '/api/combos')).json.combos.find((x: { name: string }) => x.name === 'outer');
  expect((await env.router.manage('DELETE', `/api/combos/${outer.id}`)).status).toBe(204);
  expect((await env.router.manage('DELETE', `/api/fallback-chains/${c.json.id}`)).status).toBe(204);
  expect((await env.router.manage('GET', `/api/fallback-chains/${c.json.id}`)).status).toBe(404);
});
