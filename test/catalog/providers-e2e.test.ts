/**
 * Issue 31 item 2 against the real daemon: every OpenAI- or Anthropic-compatible provider of the model
 * catalog at a known base URL is a built-in provider from data alone (catalog/providers.json), usable with
 * an API key like any other, its models and prices the catalog's; `/v1/models` and the catalog agree on
 * context lengths.
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startMockUpstream, type MockUpstream } from '../mocks/upstream.js';
import { startRouter, type RouterProcess } from '../support/router-daemon.js';
import { eventually } from '../usage/helpers.js';
import { CATALOG_PROVIDERS_FILE } from '../../src/daemon/providers/compatible/catalog.js';

let router: RouterProcess;
let mock: MockUpstream;
let key: string;
const data = JSON.parse(readFileSync(CATALOG_PROVIDERS_FILE, 'utf8')).providers as Array<{ id: string; name: string; baseUrl: string; format: string }>;

beforeAll(async () => {
  [router, mock] = await Promise.all([startRouter(), startMockUpstream()]);
  key = await router.createKey();
  await router.addConnection({ provider: 'venice', apiKey: 'sk-venice-0123456789', providerSpecificData: { baseUrl: mock.openaiBase } });
  await router.addConnection({ provider: 'openai', apiKey: 'sk-up-0123456789', providerSpecificData: { baseUrl: mock.openaiBase } });
}, 60_000);

afterAll(async () => {
  await Promise.all([router?.stop(), mock?.close()]);
});

describe('catalog providers as data', () => {
  it('every catalog provider speaking an OpenAI- or Anthropic-compatible API is a built-in provider', async () => {
    expect(data).toHaveLength(28);
    const { providers } = (await router.manage('GET', '/api/providers/catalog')).json as { providers: Array<{ id: string; baseUrl: string; format: string; authKinds: string[] }> };
    const byId = new Map(providers.map((p) => [p.id, p]));
    for (const p of data) expect(byId.has(p.id), p.id).toBe(true);
    // the ones router had no code for come from the data, as the data says
    const fromData = data.filter((p) => byId.get(p.id)!.baseUrl === p.baseUrl);
    expect(fromData.map((p) => p.id)).toEqual(expect.arrayContaining(['alibaba', 'chutes', 'github-models', 'huggingface', 'venice', 'zhipuai', 'zai-coding-plan']));
    expect(byId.get('venice')).toMatchObject({ format: 'openai-chat', authKinds: ['api-key'], baseUrl: 'https://api.venice.ai/api/v1' });
    // the ones written in code keep their own definition (openrouter, deepseek...)
    expect(byId.get('deepseek')!.baseUrl).toBe('https://api.deepseek.com/v1');
    // 32 providers written in code when issue 31 came; 21 more from the catalog's data
    expect(providers.length).toBeGreaterThanOrEqual(53);
  });

  it('a data provider serves chat with an API key, its reply priced at the catalog price', async () => {
    const res = await fetch(`${router.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'venice/llama-3.3-70b', messages: [{ role: 'user', content: 'hi' }] }),
    });
    expect(res.status, await res.clone().text()).toBe(200);
    const trace = res.headers.get('x-router-trace-id');
    const upstream = mock.requests.at(-1)!;
    expect(upstream).toMatchObject({ path: '/v1/chat/completions', model: 'llama-3.3-70b' });
    expect(upstream.headers.authorization).toBe('Bearer sk-venice-0123456789');
    const row = await eventually(async () => ((await router.manage('GET', '/api/logs')).json.logs as any[]).find((l) => l.traceId === trace));
    expect(row).toMatchObject({ provider: 'venice', model: 'llama-3.3-70b', costSource: 'computed', priceVersion: 'models.dev@2025-09-11' });
    expect(row.costUsd).toBeCloseTo((row.tokensIn * 0.7 + row.tokensOut * 2.8) / 1e6, 12);
  });

  it('/v1/models and the catalog agree on context lengths', async () => {
    const listed = (await (await fetch(`${router.url}/v1/models`, { headers: { authorization: `Bearer ${key}` } })).json()) as { data: Array<{ id: string; context_length?: number }> };
    const catalog = (await router.manage('GET', '/api/catalog/models')).json.models as Array<{ id: string; contextWindow: number | null }>;
    const windows = new Map(catalog.map((m) => [m.id, m.contextWindow]));
    const venice = listed.data.filter((m) => m.id.startsWith('venice/'));
    expect(venice.map((m) => m.id)).toContain('venice/llama-3.3-70b');
    expect(venice).toHaveLength(13);
    const checked = listed.data.filter((m) => windows.has(m.id));
    expect(checked.length).toBeGreaterThan(20);
    for (const m of checked) expect(m.context_length ?? null, m.id).toBe(windows.get(m.id));
    expect(listed.data.find((m) => m.id === 'venice/llama-3.3-70b')?.context_length).toBe(65_536);
  });
});
