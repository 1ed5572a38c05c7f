/**
 * Issue 30 items 1 and 5 in the dashboard, in Chromium: a combo's cache affinity is chosen on the Combos
 * form, the Usage breakdown shows the cached share per combo and per account, and the Providers page shows
 * each account's quota left as its replies' rate-limit headers reported it. Skipped without Chromium.
 */
import { existsSync } from 'node:fs';
import { type Browser, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startMockUpstream, type MockUpstream } from '../mocks/upstream.js';
import { startRouter, type RouterProcess } from '../support/router-daemon.js';

const CHROMIUM =
  process.env.ROUTER_TEST_NO_BROWSER === '1' ? undefined : ['/usr/bin/chromium', '/usr/bin/chromium-browser'].find((p) => existsSync(p));
const PASSWORD = 'routing-pass-123';

let router: RouterProcess;
let mock: MockUpstream;
let browser: Browser;
let page: Page;
let key: string;

describe.skipIf(!CHROMIUM)('routing in the dashboard', () => {
  beforeAll(async () => {
    mock = await startMockUpstream();
    // Every reply: 100 input tokens, half of them cache reads, and the account's request window.
    mock.handle(() => ({
      type: 'text',
      usage: { inputTokens: 100, cachedTokens: 50 },
      headers: { 'x-ratelimit-limit-requests': '100', 'x-ratelimit-remaining-requests': '42', 'x-ratelimit-reset-requests': '30s' },
    }));
    router = await startRouter();
    expect((await router.manage('PUT', '/api/auth/password', { password: PASSWORD })).status).toBe(204);
    await router.addConnection({ provider: 'openai', name: 'work', apiKey: 'sk-routing-1', providerSpecificData: { baseUrl: mock.openaiBase } });
    key = await router.createKey();
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
    page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    page.setDefaultTimeout(8000);
    await page.goto(router.url);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Log in' }).click();
    await page.getByRole('heading', { name: 'Home', level: 1 }).waitFor();
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await router?.stop();
    await mock?.close();
  });

  it('the Combos form sets cache affinity', async () => {
    await page.goto(`${router.url}/dashboard/combos`);
    await page.getByRole('button', { name: 'New combo' }).click();
    await page.getByLabel('Combo name').fill('pool');
    await page.getByRole('combobox', { name: 'Target 1' }).fill('openai/gpt-4o');
    await page.getByLabel('Cache affinity').selectOption('session');
    await page.getByRole('button', { name: 'Create combo' }).click();
    await expect.poll(async () => ((await router.manage('GET', '/api/combos')).json.combos as any[]).find((c) => c.name === 'pool')?.affinity).toBe('session');
  });

  it('the Usage breakdown shows the cached share by combo and by account; Providers shows the quota left', async () => {
    for (let i = 0; i < 2; i++) {
      const res = await fetch(`${router.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'x-router-session-id': 'dash' },
        body: JSON.stringify({ model: 'pool', messages: [{ role: 'user', content: 'hi' }] }),
      });
      expect(res.status).toBe(200);
      await res.text();
    }
    await expect.poll(async () => (await router.manage('GET', '/api/logs')).json.logs.length, { timeout: 5000 }).toBe(2);

    await page.goto(`${router.url}/dashboard/usage`);
    await page.getByRole('tab', { name: 'by combo' }).click();
    const comboRow = page.getByRole('row').filter({ has: page.getByRole('cell', { name: 'pool', exact: true }) });
    await expect.poll(() => comboRow.textContent()).toContain('50.0 %');
    await page.getByRole('tab', { name: 'by account' }).click();
    const accountRow = page.getByRole('row').filter({ has: page.getByRole('cell', { name: 'work', exact: true }) });
    await expect.poll(() => accountRow.textContent()).toContain('50.0 %');

    await page.goto(`${router.url}/dashboard/providers`);
    const conn = page.getByRole('row').filter({ has: page.getByRole('cell', { name: 'work', exact: true }) });
    await expect.poll(() => conn.textContent()).toContain('42 %');
    expect(await conn.textContent()).toContain('requests 42/100');

    // Insights > Sessions: the conversation with its cached share and the one account it used.
    await page.goto(`${router.url}/dashboard/insights`);
    const session = page.getByRole('row').filter({ has: page.getByRole('cell', { name: 'dash', exact: true }) });
    await expect.poll(() => session.textContent()).toContain('50.0 %');
  });
});
