/**
 * Issue 27 items 11 and 12 in the dashboard, in Chromium: the Requests filter takes a key's name (an
 * unknown name says so instead of "no requests"), the Keys page refuses a name another key has (the
 * management route does, so every client gets it), and the Home page never calls a provider's circuit
 * closed while one of its model circuits is open. Skipped without Chromium (the run's summary says so).
 */
import { existsSync } from 'node:fs';
import { type Browser, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startMockUpstream, type MockUpstream } from '../mocks/upstream.js';
import { startRouter, type RouterProcess } from '../support/router-daemon.js';

const CHROMIUM =
  process.env.ROUTER_TEST_NO_BROWSER === '1' ? undefined : ['/usr/bin/chromium', '/usr/bin/chromium-browser'].find((p) => existsSync(p));
const PASSWORD = 'names-pass-123';

let router: RouterProcess;
let mock: MockUpstream;
let browser: Browser;
let page: Page;
const keys: Record<string, { id: string; key: string }> = {};

async function chat(key: string, model: string): Promise<number> {
  const res = await fetch(`${router.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model, messages: [{ role: 'user', content: 'hi' }] }),
  });
  await res.text();
  return res.status;
}

describe.skipIf(!CHROMIUM)('names in the dashboard', () => {
  beforeAll(async () => {
    mock = await startMockUpstream();
    router = await startRouter();
    expect((await router.manage('PUT', '/api/auth/password', { password: PASSWORD })).status).toBe(204);
    await router.addConnection({ provider: 'openai', name: 'work', apiKey: 'sk-names-1', providerSpecificData: { baseUrl: mock.openaiBase } });
    for (const name of ['alice', 'bob']) {
      const r = await router.manage('POST', '/api/keys', { name, scopes: ['proxy'] });
      keys[name] = { id: r.json.id, key: r.json.key };
    }
    expect(await chat(keys.alice!.key, 'openai/gpt-4o-mini')).toBe(200);
    expect(await chat(keys.bob!.key, 'openai/gpt-4o')).toBe(200);
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
    page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
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

  it("the Requests filter takes a key's name; an unknown name is an error, not an empty log", async () => {
    await page.goto(`${router.url}/dashboard/requests`);
    const filters = page.getByRole('form', { name: 'Filters' });
    await filters.getByLabel('key').fill('alice');
    await filters.getByRole('button', { name: 'Filter' }).click();
    await page.getByRole('cell', { name: 'openai/gpt-4o-mini' }).waitFor();
    await expect.poll(() => page.locator('table.log tbody tr').count()).toBe(1);

    await filters.getByLabel('key').fill('carol');
    await filters.getByRole('button', { name: 'Filter' }).click();
    await expect.poll(() => page.getByRole('alert').first().textContent()).toBe("No API key has the name or id 'carol'.");
    expect(await page.getByText('No request matches these filters.').count()).toBe(0);
  });

  it('the Keys page refuses a name another key has, under the name field', async () => {
    await page.goto(`${router.url}/dashboard/keys`);
    const name = page.getByLabel('Key name');
    await name.fill('alice');
    await page.getByRole('button', { name: 'Create key' }).click();
    await expect.poll(() => page.getByRole('alert').first().textContent()).toContain("An API key named 'alice' already exists");
    const { keys: list } = (await router.manage('GET', '/api/keys')).json;
    expect(list.filter((k: { name: string }) => k.name === 'alice')).toHaveLength(1);
  });

  it('the Home page shows a provider with an open model circuit as such, never "closed"', async () => {
    expect((await router.manage('PATCH', '/api/settings', { breakerFailureThreshold: 1 })).status).toBe(200);
    mock.enqueue({ type: 'status', status: 500, message: 'boom' });
    expect(await chat(keys.bob!.key, 'openai/gpt-4o')).toBe(500);
    await page.goto(`${router.url}/dashboard`);
    await page.getByRole('heading', { name: 'Home', level: 1 }).waitFor();
    const row = page.getByRole('row').filter({ has: page.getByRole('cell', { name: 'openai', exact: true }) });
    await expect.poll(() => row.locator('.badge').textContent()).toBe('1 model open');
    expect(await row.locator('.badge.open').count()).toBe(1);
  });
});
