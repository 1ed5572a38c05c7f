/**
 * Issue 31 items 1 and 4 against the real daemon: `GET /api/catalog/models`, `router catalog`, `router
 * catalog update` (from a local HTTP server serving a small api.json, and from an unreachable URL), and the
 * cost source of every usage row: computed (with the price version that priced it: router's table, the
 * catalog, the user's override), reported (OpenRouter's `usage.cost`), unpriced (`costUsd: null`, counted
 * apart in analytics and named by the CLI), over HTTP, the CLI and the request.completed event.
 */
import { createServer, type Server } from 'node:http';
import { rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startMockUpstream, type MockUpstream } from '../mocks/upstream.js';
import { freePort } from '../support/cli.js';
import { startRouter, type RouterProcess } from '../support/router-daemon.js';
import { isolateCliConfig, json, run, show } from '../cli/helpers.js';
import { eventually } from '../usage/helpers.js';

let router: RouterProcess;
let mock: MockUpstream;
let configDir: string;
let catalogServer: Server;
let catalogUrl: string;
let served = 0;
let key: string;

const API_JSON = {
  acme: {
    id: 'acme',
    name: 'Acme AI',
    npm: '@ai-sdk/openai-compatible',
    api: 'https://api.acme.example/v1',
    env: ['ACME_API_KEY'],
    models: {
      'acme-large': {
        id: 'acme-large',
        name: 'Acme Large',
        reasoning: true,
        tool_call: true,
        modalities: { input: ['text', 'image'], output: ['text'] },
        cost: { input: 4, output: 16, cache_read: 0.4, cache_write: 5 },
        limit: { context: 300000, output: 20000 },
        last_updated: '2026-11-20',
      },
    },
  },
  // A new compatible provider whose id a user's provider node already has as its prefix: the node wins.
  beta: {
    id: 'beta',
    name: 'Beta Cloud',
    npm: '@ai-sdk/openai-compatible',
    api: 'https://api.beta.example/v1',
    env: ['BETA_API_KEY'],
    models: { 'beta-1': { id: 'beta-1', name: 'Beta 1', cost: { input: 1, output: 2 }, limit: { context: 64000, output: 8000 }, last_updated: '2026-11-10' } },
  },
  openai: {
    id: 'openai',
    name: 'OpenAI',
    npm: '@ai-sdk/openai',
    models: { 'gpt-4-turbo': { id: 'gpt-4-turbo', name: 'GPT-4 Turbo', cost: { input: 20, output: 60 }, limit: { context: 128000, output: 4096 }, last_updated: '2026-11-01' } },
  },
};

beforeAll(async () => {
  configDir = isolateCliConfig();
  catalogServer = createServer((req, res) => {
    served++;
    if (req.url === '/api.json') {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(API_JSON));
    } else if (req.url === '/not-a-catalog.json') {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ message: 'hello' }));
    } else {
      res.writeHead(503).end('down');
    }
  });
  await new Promise<void>((r) => catalogServer.listen(0, '127.0.0.1', r));
  catalogUrl = `http://127.0.0.1:${(catalogServer.address() as AddressInfo).port}/api.json`;
  [router, mock] = await Promise.all([startRouter({ keepHome: true }), startMockUpstream()]);
  key = await router.createKey();
  await router.addConnection({ provider: 'openai', apiKey: 'sk-up-0123456789', providerSpecificData: { baseUrl: mock.openaiBase } });
  await router.addConnection({ provider: 'openrouter', apiKey: 'sk-or-0123456789', providerSpecificData: { baseUrl: mock.openaiBase } });
}, 60_000);

afterAll(async () => {
  await Promise.all([router?.stop(), mock?.close(), new Promise((r) => catalogServer?.close(r))]);
  rmSync(configDir, { recursive: true, force: true });
  if (router) rmSync(router.home, { recursive: true, force: true });
});

const R = (...args: string[]) => run([...args, '--home', router.home]);
async function ok(...args: string[]) {
  const r = await R(...args);
  expect(r.exitCode, show(r)).toBe(0);
  return r;
}

async function chat(model: string): Promise<string> {
  const res = await fetch(`${router.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model, messages: [{ role: 'user', content: 'hi' }] }),
  });
  expect(res.status, await res.clone().text()).toBe(200);
  return res.headers.get('x-router-trace-id')!;
}

async function rowOf(trace: string): Promise<any> {
  return eventually(async () => ((await router.manage('GET', '/api/logs?limit=500')).json.logs as any[]).find((l) => l.traceId === trace));
}

describe('GET /api/catalog/models and router catalog', () => {
  it('lists the shipped catalog with its version', async () => {
    const r = await router.manage('GET', '/api/catalog/models');
    expect(r.status).toBe(200);
    expect(r.json.version).toBe('models.dev@2025-09-11');
    expect(r.json.models.length).toBeGreaterThan(680);
    expect(r.json.models).toContainEqual(
      expect.objectContaining({ id: 'anthropic/claude-3-7-sonnet-20250219', contextWindow: 200_000, maxOutputTokens: 64_000, toolCall: true, reasoning: true, source: 'catalog', prices: expect.objectContaining({ input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 }) }),
    );
    // a model only router's provider lists (not in models.dev's snapshot) is there too, as `provider`
    expect(r.json.models).toContainEqual(expect.objectContaining({ id: 'openai/text-embedding-3-small', source: 'provider', contextWindow: 8_191, prices: expect.objectContaining({ input: 0.02, output: 0 }) }));
    expect((await router.manage('GET', '/api/catalog/models?surprise=1')).status).toBe(400);
  });

  it('router catalog filters and prints a table or JSON', async () => {
    const human = await ok('catalog', '--provider', 'anthropic', '--search', 'sonnet 3.7');
    expect(human.stdout).toMatch(/^catalog models\.dev@2025-09-11 \(@tokenlens\/models@1\.3\.0/);
    expect(human.stdout).toMatch(/\nanthropic\/claude-3-7-sonnet-20250219\s+200,000\s+64,000\s+\$3\s+\$15\s+\$0\.3\s+\$3\.75\s+tools reasoning image\s+catalog\n/);
    const data = json(await ok('catalog', '--json', '--provider', 'gemini'));
    expect(data.models.length).toBeGreaterThan(5);
    expect(data.models.every((m: { provider: string }) => m.provider === 'gemini')).toBe(true);
  });

  it('shows a user price override in place of the catalog figure', async () => {
    expect((await router.manage('PUT', '/api/pricing/anthropic/claude-3-7-sonnet-20250219', { input: 1, output: 2 })).status).toBe(200);
    const data = json(await ok('catalog', '--json', '--provider', 'anthropic', '--search', 'claude-3-7-sonnet-20250219'));
    expect(data.models).toEqual([expect.objectContaining({ source: 'override', prices: expect.objectContaining({ input: 1, output: 2, cacheRead: null }) })]);
    await router.manage('DELETE', '/api/pricing/anthropic/claude-3-7-sonnet-20250219');
  });
});

describe('cost sources', () => {
  it('a model of router\'s own table: computed, with its version', async () => {
    const row = await rowOf(await chat('openai/gpt-4o'));
    expect(row).toMatchObject({ costSource: 'computed', priceVersion: 'router@2026-11' });
    expect(row.costUsd).toBeCloseTo((row.tokensIn * 2.5 + row.tokensOut * 10) / 1e6, 12);
  });

  it('a model only the catalog prices: computed at the catalog price, its version named', async () => {
    const row = await rowOf(await chat('openai/gpt-4-turbo'));
    expect(row).toMatchObject({ costSource: 'computed', priceVersion: 'models.dev@2025-09-11' });
    expect(row.costUsd).toBeCloseTo((row.tokensIn * 10 + row.tokensOut * 30) / 1e6, 12);
  });

  it('a model nobody prices: unpriced, costUsd null (not 0), counted apart and named by the CLI', async () => {
    const from = Date.now() - 1;
    const trace = await chat('openai/my-finetune-xyz');
    const row = await rowOf(trace);
    expect(row).toMatchObject({ costSource: 'unpriced', costUsd: null, priceVersion: null });
    const summary = (await router.manage('GET', `/api/usage/summary?from=${from}`)).json;
    expect(summary.unpricedRequests).toBe(1);
    // Every aggregate says so: breakdown rows and timeseries points count it apart, never as $0.
    const byModel = (await router.manage('GET', `/api/usage/breakdown?by=model&from=${from}`)).json.rows;
    expect(byModel).toEqual([expect.objectContaining({ key: 'openai/my-finetune-xyz', costUsd: 0, unpricedRequests: 1 })]);
    const points = (await router.manage('GET', `/api/usage/timeseries?bucket=minute&from=${from}`)).json.points as any[];
    expect(points.reduce((n, p) => n + p.unpricedRequests, 0)).toBe(1);
    const usage = await ok('usage', '--from', String(from));
    // No priced request cost anything: the total is the unpriced count alone, no "$0".
    expect(usage.stdout).toMatch(/cost\s+1 request unpriced/);
    expect(usage.stdout).not.toMatch(/\$0/);
    const logs = await ok('logs', '--limit', '5');
    expect(logs.stdout).toMatch(/openai\/my-finetune-xyz.*unpriced/);
  });

  it("a provider's own figure (OpenRouter usage.cost) is reported and wins", async () => {
    mock.enqueue({
      type: 'custom',
      fn: (_req, res) => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(
          JSON.stringify({
            id: 'gen-1',
            object: 'chat.completion',
            created: 1,
            model: 'openai/gpt-4o',
            choices: [{ index: 0, message: { role: 'assistant', content: 'hi' }, finish_reason: 'stop' }],
            usage: { prompt_tokens: 10, completion_tokens: 2, total_tokens: 12, cost: 0.000123, is_byok: false },
          }),
        );
      },
    });
    const row = await rowOf(await chat('openrouter/openai/gpt-4o'));
    expect(row).toMatchObject({ costSource: 'reported', costUsd: 0.000123, priceVersion: null, tokensIn: 10, tokensOut: 2 });
  });
});

describe('router catalog update', () => {
  it('offline (unreachable URL): says so, exits 1, keeps the catalog', async () => {
    await router.manage('PATCH', '/api/settings', { catalogUrl: `http://127.0.0.1:${await freePort()}/api.json` });
    const r = await R('catalog', 'update');
    expect(r.exitCode, show(r)).toBe(1);
    expect(r.stdout).toMatch(/^catalog not updated: could not reach 127\.0\.0\.1:\d+ \(ECONNREFUSED\); keeping models\.dev@2025-09-11 \(47 providers, 687 models\)/);
    expect((await router.manage('GET', '/api/catalog/models')).json.version).toBe('models.dev@2025-09-11');
  });

  it('a reply that is not a catalog or an HTTP error: says so and keeps the catalog', async () => {
    await router.manage('PATCH', '/api/settings', { catalogUrl: catalogUrl.replace('api.json', 'not-a-catalog.json') });
    expect(json(await R('catalog', 'update', '--json'))).toMatchObject({ updated: false, version: 'models.dev@2025-09-11', reason: 'the reply is not a models.dev catalog (no provider with models)' });
    await router.manage('PATCH', '/api/settings', { catalogUrl: catalogUrl.replace('api.json', 'gone') });
    expect(json(await R('catalog', 'update', '--json'))).toMatchObject({ updated: false, reason: expect.stringMatching(/answered HTTP 503$/) });
    expect((await router.manage('PATCH', '/api/settings', { catalogUrl: 'file:///etc/passwd' })).status).toBe(400);
  });

  it('from a local server: the new catalog is used for listing and pricing, and kept over a restart', async () => {
    await router.manage('PATCH', '/api/settings', { catalogUrl });
    // Before the update: acme is no provider; the user's node named beta is.
    expect((await router.manage('POST', '/api/providers', { provider: 'acme', apiKey: 'sk-acme-0123456789' })).status).toBe(400);
    const node = await router.manage('POST', '/api/provider-nodes', { name: 'My beta', prefix: 'beta', type: 'openai-compatible', baseUrl: mock.openaiBase });
    expect(node.status, JSON.stringify(node.json)).toBe(201);
    const before = served;
    const r = await ok('catalog', 'update');
    expect(served).toBe(before + 1);
    expect(r.stdout).toBe('catalog updated to models.dev@2026-11-20 (was models.dev@2025-09-11): 3 providers, 3 models\n');
    const list = (await router.manage('GET', '/api/catalog/models')).json;
    expect(list.version).toBe('models.dev@2026-11-20');
    expect(list.models).toContainEqual(expect.objectContaining({ id: 'acme/acme-large', contextWindow: 300_000, prices: expect.objectContaining({ input: 4, cacheWrite: 5 }) }));
    // the catalog's new price applies to new rows at once
    const row = await rowOf(await chat('openai/gpt-4-turbo'));
    expect(row).toMatchObject({ costSource: 'computed', priceVersion: 'models.dev@2026-11-20' });
    expect(row.costUsd).toBeCloseTo((row.tokensIn * 20 + row.tokensOut * 60) / 1e6, 12);
    // ...but never over the user's own price
    await router.manage('PUT', '/api/pricing/openai/gpt-4-turbo', { input: 1, output: 1 });
    const mine = await rowOf(await chat('openai/gpt-4-turbo'));
    expect(mine).toMatchObject({ costSource: 'computed', priceVersion: 'override' });
    expect(mine.costUsd).toBeCloseTo((mine.tokensIn + mine.tokensOut) / 1e6, 12);

    // The update refreshed the providers generated from the catalog, without a restart: acme is a built-in
    // provider now (the account's own base URL, a user setting, wins over the catalog's)...
    const added = await router.manage('POST', '/api/providers', { provider: 'acme', apiKey: 'sk-acme-0123456789', providerSpecificData: { baseUrl: mock.openaiBase } });
    expect(added.status, JSON.stringify(added.json)).toBe(201);
    const acme = await rowOf(await chat('acme/acme-large'));
    expect(acme).toMatchObject({ provider: 'acme', model: 'acme-large', costSource: 'computed', priceVersion: 'models.dev@2026-11-20' });
    expect(acme.costUsd).toBeCloseTo((acme.tokensIn * 4 + acme.tokensOut * 16) / 1e6, 12);
    // ...and /v1/models agrees with the catalog on its context length.
    const listed = async () => ((await (await fetch(`${router.url}/v1/models`, { headers: { authorization: `Bearer ${key}` } })).json()) as any).data as any[];
    expect((await listed()).find((m) => m.id === 'acme/acme-large')).toMatchObject({ context_length: 300_000 });
    // The user's node keeps the prefix beta: its requests still go to the node.
    const viaNode = await rowOf(await chat('beta/beta-1'));
    expect(viaNode.providerId).toBe(node.json.id);

    const home = router.home;
    await router.stop();
    router = await startRouter({ home });
    expect((await router.manage('GET', '/api/catalog/models')).json.version).toBe('models.dev@2026-11-20');
    // After a restart the updated providers are still served.
    expect((await rowOf(await chat('acme/acme-large'))).provider).toBe('acme');
    expect((await listed()).find((m) => m.id === 'acme/acme-large')).toMatchObject({ context_length: 300_000 });
  }, 60_000);
});
