/**
 * Issue 31 item 4 in the dashboard, in Chromium: requests to a model with no known price are shown as "n
 * requests unpriced", never as $0 — the Home and Usage cost stats, the Usage breakdown, the Keys page's cost
 * per key, the Insights page's sessions and eval scores. Skipped without Chromium.
 */
import { existsSync } from 'node:fs';
import { type Browser, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startMockUpstream, type MockUpstream } from '../mocks/upstream.js';
import { startRouter, type RouterProcess } from '../support/router-daemon.js';

const CHROMIUM =
  process.env.ROUTER_TEST_NO_BROWSER === '1' ? undefined : ['/usr/bin/chromium', '/usr/bin/chromium-browser'].find((p) => existsSync(p));
const PASSWORD = 'unpriced-pass-123';
const UNPRICED = 'openai/my-unpriced-finetune';

let router: RouterProcess;
let mock: MockUpstream;
let browser: Browser;
let page: Page;

async function chat(key: string, model: string): Promise<void> {
  const res = await fetch(`${router.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'x-router-session-id': 'unpriced-session' },
    body: JSON.stringify({ model, messages: [{ role: 'user', content: 'hi' }] }),
  });
  expect(res.status).toBe(200);
  await res.text();
}

describe.skipIf(!CHROMIUM)('unpriced requests in the dashboard', () => {
  beforeAll(async () => {
    mock = await startMockUpstream();
    mock.handle(() => ({ type: 'text', text: 'yes', usage: { inputTokens: 100, outputTokens: 20 } }));
    router = await startRouter();
    expect((await router.manage('PUT', '/api/auth/password', { password: PASSWORD })).status).toBe(204);
    await router.addConnection({ provider: 'openai', apiKey: 'sk-unpriced', providerSpecificData: { baseUrl: mock.openaiBase } });
    const key = await router.createKey();
    await chat(key, UNPRICED);
    await chat(key, UNPRICED);
    await chat(key, 'openai/gpt-4o-mini');
    const ev = await router.manage('POST', '/api/evals', { name: 'cheap', models: [UNPRICED], cases: [{ prompt: 'Say yes', checks: [{ type: 'contains', value: 'yes' }] }] });
    expect(ev.status).toBe(201);
    expect((await router.manage('POST', `/api/evals/${ev.json.id}/run`, { wait: true })).status).toBe(200);
    for (let t = Date.now(); (await router.manage('GET', '/api/logs')).json.logs.length < 4; ) {
      if (Date.now() - t > 5000) throw new Error('usage rows not recorded');
      await new Promise((r) => setTimeout(r, 50));
    }

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

  it('Home and Usage: the cost stat names the unpriced requests; the breakdown row of the unpriced model has no $ figure', async () => {
    await expect.poll(() => page.locator('main').textContent()).toContain('3 requests unpriced');
    await page.goto(`${router.url}/dashboard/usage`);
    await expect.poll(() => page.locator('main').textContent()).toContain('3 requests unpriced');
    await page.getByRole('tab', { name: 'by model' }).click();
    const row = page.getByRole('row').filter({ has: page.getByRole('cell', { name: UNPRICED, exact: true }) });
    await expect.poll(() => row.textContent()).toContain('3 requests unpriced');
    expect(await row.textContent()).not.toContain('$');
  });

  it('Usage charts: a cost point of unpriced requests only is blank (unknown), not $0; a mixed one is called a lower bound', async () => {
    await page.goto(`${router.url}/dashboard/usage`);
    const cost = page.getByRole('figure', { name: /^Cost \(USD\)/ });
    const costSection = page.locator('section[aria-label="Cost"]');
    // All traffic: the bucket holds priced and unpriced requests: drawn, and said to be a lower bound.
    await expect.poll(() => costSection.textContent()).toContain('3 requests have no known price: no point is blank, and 1 point counts only the priced requests (a lower bound)');
    expect(await cost.locator('.chart-box').getAttribute('data-blank')).toBe('0');
    // Only the unpriced model: its bucket's cost is unknown, a gap in the line instead of a $0 point.
    await page.getByLabel('Model').fill('my-unpriced-finetune');
    await expect.poll(() => costSection.textContent()).toContain('3 requests have no known price: 1 point is left blank (cost unknown)');
    expect(Number(await cost.locator('.chart-box').getAttribute('data-blank'))).toBe(1);
    // The per-key chart by cost says the same.
    await page.getByLabel('Show').selectOption('cost');
    const byKey = page.getByRole('figure', { name: /^cost \(USD\) by key/ });
    await expect.poll(async () => Number(await byKey.locator('.chart-box').getAttribute('data-blank'))).toBeGreaterThan(0);
    await expect.poll(() => page.locator('main').textContent()).toContain('point is left blank (cost unknown)');
  });

  it("Keys: the key's 30-day cost counts its unpriced requests apart", async () => {
    await page.goto(`${router.url}/dashboard/keys`);
    const row = page.getByRole('row').filter({ hasText: /requests? unpriced/ });
    await expect.poll(() => row.textContent()).toMatch(/\$0\.\d+ \(2 requests unpriced\)/);
  });

  it("Insights: the session's cost and the eval's score name the unpriced requests", async () => {
    await page.goto(`${router.url}/dashboard/insights`);
    const session = page.getByRole('row').filter({ hasText: 'unpriced-session' });
    await expect.poll(() => session.textContent()).toMatch(/\$0\.\d+ \(2 requests unpriced\)/);
    const score = page.getByRole('row').filter({ has: page.getByRole('cell', { name: UNPRICED, exact: true }) });
    await expect.poll(() => score.textContent()).toContain('1 request unpriced');
    expect(await score.textContent()).not.toContain('$');
  });
});
