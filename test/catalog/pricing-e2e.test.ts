/**
 * Issue 31 item 5: `router pricing list|set|rm` and the dashboard's Pricing page (Chromium) edit the
 * overrides of `/api/pricing`; a price set for a provider node's prefix applies to that node's models
 * (before, it was stored under the prefix while rows carry the node's id: accepted, never applied); bad
 * values are a 400 naming the field. Real daemon, mock upstream.
 */
import { existsSync, rmSync } from 'node:fs';
import { type Browser, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startMockUpstream, type MockUpstream } from '../mocks/upstream.js';
import { startRouter, type RouterProcess } from '../support/router-daemon.js';
import { isolateCliConfig, json, run, show } from '../cli/helpers.js';
import { eventually } from '../usage/helpers.js';

const CHROMIUM = process.env.ROUTER_TEST_NO_BROWSER === '1' ? undefined : ['/usr/bin/chromium', '/usr/bin/chromium-browser'].find((p) => existsSync(p));
const PASSWORD = 'pricing-pass-123';

let router: RouterProcess;
let mock: MockUpstream;
let configDir: string;
let key: string;

beforeAll(async () => {
  configDir = isolateCliConfig();
  [router, mock] = await Promise.all([startRouter(), startMockUpstream()]);
  key = await router.createKey();
  await router.addConnection({ provider: 'openai', apiKey: 'sk-up-0123456789', providerSpecificData: { baseUrl: mock.openaiBase } });
  const node = await router.manage('POST', '/api/provider-nodes', { name: 'GPU box', prefix: 'gpu', type: 'openai-compatible', baseUrl: mock.openaiBase });
  expect(node.status, JSON.stringify(node.json)).toBe(201);
}, 60_000);

afterAll(async () => {
  await Promise.all([router?.stop(), mock?.close()]);
  rmSync(configDir, { recursive: true, force: true });
});

const R = (...args: string[]) => run([...args, '--home', router.home]);
async function ok(...args: string[]) {
  const r = await R(...args);
  expect(r.exitCode, show(r)).toBe(0);
  return r;
}

async function chat(model: string): Promise<any> {
  const res = await fetch(`${router.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model, messages: [{ role: 'user', content: 'hi' }] }),
  });
  expect(res.status, await res.clone().text()).toBe(200);
  const trace = res.headers.get('x-router-trace-id');
  return eventually(async () => ((await router.manage('GET', '/api/logs')).json.logs as any[]).find((l) => l.traceId === trace));
}

describe('router pricing', () => {
  it('lists, sets (the override applies to new rows) and removes prices', async () => {
    const list = await ok('pricing', 'list', '--provider', 'openai');
    expect(list.stdout).toMatch(/\nopenai\/gpt-4o\s+\$2\.5\s+\$10\s+\$1\.25\s+-\s+-\s+default\n/);
    const set = await ok('pricing', 'set', 'openai/gpt-4o', '--input', '1', '--output', '2', '--cache-read', '0.1');
    expect(set.stdout).toMatch(/^price set: /);
    expect(set.stdout).toMatch(/openai\/gpt-4o\s+\$1\s+\$2\s+\$0\.1\s+-\s+-\s+override \(has default\)/);
    const row = await chat('openai/gpt-4o');
    expect(row).toMatchObject({ costSource: 'computed', priceVersion: 'override' });
    expect(row.costUsd).toBeCloseTo((row.tokensIn * 1 + row.tokensOut * 2) / 1e6, 12);
    const entries = json(await ok('pricing', 'list', '--provider', 'openai', '--json'));
    expect(entries).toContainEqual(expect.objectContaining({ provider: 'openai', model: 'gpt-4o', input: 1, source: 'override' }));
    expect((await ok('pricing', 'rm', 'openai/gpt-4o')).stdout).toBe('price removed: openai/gpt-4o is back to the shipped price ($2.5 in, $10 out)\n');
    expect((await chat('openai/gpt-4o')).priceVersion).toBe('router@2026-11');
  });

  it('every field at its edges: 0 and 100000 accepted, just outside, a string or an unknown field a 400 naming it', async () => {
    const fields = ['input', 'output', 'cacheRead', 'cacheWrite', 'reasoning', 'imageInput', 'imageOutput', 'audioInput', 'audioOutput', 'perImage', 'perAudioMinute', 'minAudioSeconds', 'perMillionCharacters', 'perSearchUnit'];
    const put = (body: Record<string, unknown>) => router.manage('PUT', '/api/pricing/openai/edge-model', { input: 1, output: 1, ...body });
    for (const f of fields) {
      for (const good of [0, 100_000]) expect((await put({ [f]: good })).status, `${f}=${good}`).toBe(200);
      for (const bad of [-0.0001, 100_000.01, 'cheap', Number.MAX_VALUE]) {
        const r = await put({ [f]: bad });
        expect(r.status, `${f}=${bad}`).toBe(400);
        expect(r.json.error, `${f}=${bad}`).toMatchObject({ type: 'invalid_request_error', param: f, message: expect.stringMatching(new RegExp(`^Invalid field '${f}'`)) });
      }
    }
    const badKey = await put({ perImage: { 'hd 1024': 0.1 } });
    expect(badKey.status).toBe(400);
    expect(badKey.json.error.param).toMatch(/^perImage/);
    const unknown = await put({ cheapness: 1 });
    expect(unknown.status).toBe(400);
    expect(unknown.json.error.message).toMatch(/cheapness/);
    const badProvider = await router.manage('PUT', '/api/pricing/bad%20provider/m', { input: 1, output: 1 });
    expect(badProvider.status).toBe(400);
    expect(badProvider.json.error.param).toBe('provider');
    await router.manage('DELETE', '/api/pricing/openai/edge-model');
  });

  it('refuses bad values, naming the field', async () => {
    const negative = await R('pricing', 'set', 'openai/gpt-4o', '--input', '-1', '--output', '2');
    expect(negative.exitCode, show(negative)).toBe(2);
    expect(negative.stderr).toMatch(/^router: input: Too small: expected number to be >=0/);
    const http = await router.manage('PUT', '/api/pricing/openai/gpt-4o', { input: 1, output: 1, cacheWrite: 'cheap' });
    expect(http.status).toBe(400);
    expect(http.json.error).toMatchObject({ param: 'cacheWrite', message: expect.stringMatching(/^Invalid field 'cacheWrite'/) });
    const word = await R('pricing', 'set', 'openai/gpt-4o', '--input', 'one', '--output', '2');
    expect(word.exitCode).toBe(2);
    expect(word.stderr).toMatch(/--input expects a number/);
    expect((await R('pricing', 'set', 'gpt-4o', '--input', '1', '--output', '2')).stderr).toMatch(/expected <provider>\/<model>/);
    expect((await R('pricing', 'rm', 'openai/gpt-4o')).exitCode).toBe(1);
  });

  it("a price set for a node's prefix applies to that node's models", async () => {
    expect((await chat('gpu/llama-3-70b')).costSource).toBe('unpriced');
    await ok('pricing', 'set', 'gpu/llama-3-70b', '--input', '0.6', '--output', '0.8');
    const row = await chat('gpu/llama-3-70b');
    expect(row).toMatchObject({ provider: 'gpu', costSource: 'computed', priceVersion: 'override' });
    expect(row.costUsd).toBeCloseTo((row.tokensIn * 0.6 + row.tokensOut * 0.8) / 1e6, 12);
    // listed under the prefix people know, as the CLI and the Pricing page show it
    expect(json(await ok('pricing', 'list', '--provider', 'gpu', '--json'))).toEqual([expect.objectContaining({ provider: 'gpu', model: 'llama-3-70b', input: 0.6 })]);
    await ok('pricing', 'rm', 'gpu/llama-3-70b');
  });
});

describe.skipIf(!CHROMIUM)('the Pricing page in Chromium', () => {
  let browser: Browser;
  let page: Page;

  beforeAll(async () => {
    expect((await router.manage('PUT', '/api/auth/password', { password: PASSWORD })).status).toBe(204);
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
    page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    await page.goto(router.url);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Log in' }).click();
    await page.getByRole('heading', { name: 'Home', level: 1 }).waitFor();
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
  });

  it('lists prices, sets one for a node prefix (applied to its next request), shows a refused value at its field, removes the override', async () => {
    await page.getByRole('link', { name: 'Pricing' }).click();
    await page.getByRole('heading', { name: 'Pricing', level: 1 }).waitFor();
    await page.getByLabel('Filter').fill('claude-haiku-4-5');
    await expect.poll(() => page.getByRole('table', { name: 'Price table' }).locator('tbody tr').count()).toBe(1);
    expect(await page.getByRole('row', { name: /anthropic\/claude-haiku-4-5/ }).textContent()).toMatch(/\$1\$5\$0\.1\$1\.25–default/);

    const form = page.locator('form', { has: page.getByRole('heading', { name: 'Set a price' }) });
    await form.getByLabel('Model').fill('gpu/qwen3-32b');
    await form.getByLabel('Input (USD / 1M tokens)').fill('-3');
    await form.getByLabel('Output (USD / 1M tokens)').fill('1');
    await form.getByRole('button', { name: 'Save price' }).click();
    await expect.poll(() => form.getByText(/Invalid field 'input'/).count()).toBe(1);

    await form.getByLabel('Input (USD / 1M tokens)').fill('0.3');
    await form.getByLabel('Cache read (USD / 1M tokens)').fill('0.03');
    await form.getByRole('button', { name: 'Save price' }).click();
    await form.getByRole('status').filter({ hasText: 'Saved gpu/qwen3-32b.' }).waitFor();
    await page.getByLabel('Filter').fill('gpu/');
    await page.getByRole('row', { name: /gpu\/qwen3-32b/ }).waitFor();
    expect(await page.getByRole('row', { name: /gpu\/qwen3-32b/ }).textContent()).toMatch(/\$0\.3\$1\$0\.03––override/);
    const row = await chat('gpu/qwen3-32b');
    expect(row).toMatchObject({ costSource: 'computed', priceVersion: 'override' });
    expect(row.costUsd).toBeCloseTo((row.tokensIn * 0.3 + row.tokensOut * 1) / 1e6, 12);

    await page.getByRole('row', { name: /gpu\/qwen3-32b/ }).getByRole('button', { name: 'Remove override' }).click();
    await expect.poll(() => page.getByRole('row', { name: /gpu\/qwen3-32b/ }).count()).toBe(0);
    expect((await router.manage('GET', '/api/pricing?provider=gpu')).json.pricing).toEqual([]);
  });
});
