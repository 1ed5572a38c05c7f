/**
 * Issue 27 item 13 in Chromium (playwright-core, Debian's /usr/bin/chromium), against the real daemon:
 * memory on and off from a key's edit form, and the Settings page built from the daemon's settings schema
 * (groups, a description, a typed control and the default of each setting), and a request's detail that
 * stays on the request opened while new ones arrive. Skipped without Chromium.
 * With ROUTER_DASHBOARD_SCREENSHOTS=1 the Settings screenshot goes to docs/dashboard/settings.png.
 */
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type Browser, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type MockUpstream, startMockUpstream } from '../mocks/upstream.js';
import { startRouter, type RouterProcess } from '../support/router-daemon.js';

const CHROMIUM = process.env.ROUTER_TEST_NO_BROWSER === '1' ? undefined : ['/usr/bin/chromium', '/usr/bin/chromium-browser'].find((p) => existsSync(p));
const PASSWORD = 'reach-for-pass-123';
const DOCS = process.env.ROUTER_DASHBOARD_SCREENSHOTS === '1';
const SHOTS = DOCS ? fileURLToPath(new URL('../../docs/dashboard/', import.meta.url)) : mkdtempSync(join(tmpdir(), 'router-shots-'));

let router: RouterProcess;
let mock: MockUpstream;
let browser: Browser;
let page: Page;
const pageErrors: string[] = [];

describe.skipIf(!CHROMIUM)('what users reach for, in the dashboard', () => {
  beforeAll(async () => {
    [router, mock] = await Promise.all([startRouter(), startMockUpstream()]);
    expect((await router.manage('PUT', '/api/auth/password', { password: PASSWORD })).status).toBe(204);
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
    page = await browser.newPage({ viewport: { width: 1280, height: 800 }, colorScheme: 'light' });
    page.on('pageerror', (e) => pageErrors.push(e.message));
    await page.goto(router.url);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Log in' }).click();
    await page.getByRole('heading', { name: 'Home', level: 1 }).waitFor();
  }, 60_000);

  afterAll(async () => {
    expect(pageErrors).toEqual([]);
    await browser?.close();
    await Promise.all([router?.stop(), mock?.close()]);
  });

  it("turns a key's memory on and off from its edit form", async () => {
    const created = await router.manage('POST', '/api/keys', { name: 'notes', scopes: ['proxy'] });
    await router.manage('POST', '/api/keys', { name: 'other', scopes: ['proxy'] });
    const id = created.json.id as string;
    const stored = async (keyId: string) => (await router.manage('GET', `/api/memory/keys/${keyId}/settings`)).json;

    await page.goto(`${router.url}/dashboard/keys`);
    const row = page.getByRole('row').filter({ hasText: 'notes' });
    await row.getByRole('button', { name: 'Edit' }).click();
    const form = page.getByRole('form', { name: 'Edit key notes' });
    const inject = form.getByRole('checkbox', { name: /Inject relevant memories/ });
    const extract = form.getByRole('checkbox', { name: /Extract new memories/ });
    await expect.poll(() => inject.isEnabled()).toBe(true);
    expect(await inject.isChecked()).toBe(false);
    expect(await extract.isChecked()).toBe(false);
    await inject.check();
    await extract.check();
    await form.getByRole('button', { name: 'Save' }).click();
    await form.waitFor({ state: 'detached' });
    await expect.poll(() => stored(id)).toMatchObject({ inject: true, extract: true });
    const others = (await router.manage('GET', '/api/keys')).json.keys.filter((k: { name: string }) => k.name === 'other');
    expect(await stored(others[0].id)).toMatchObject({ inject: false, extract: false });

    // Reopened, the form shows what is stored; turning one part off saves just that.
    await page.reload();
    await page.getByRole('row').filter({ hasText: 'notes' }).getByRole('button', { name: 'Edit' }).click();
    await expect.poll(() => form.getByRole('checkbox', { name: /Inject relevant memories/ }).isChecked()).toBe(true);
    await form.getByRole('checkbox', { name: /Extract new memories/ }).uncheck();
    await form.getByRole('button', { name: 'Save' }).click();
    await form.waitFor({ state: 'detached' });
    await expect.poll(() => stored(id)).toMatchObject({ inject: true, extract: false });
  });

  it('shows every setting of the schema by group, with its description, a typed control and its default', async () => {
    const schema = (await router.manage('GET', '/api/settings/schema')).json as {
      groups: Array<{ id: string; title: string; settings: Array<{ key: string; description: string }> }>;
    };
    await page.goto(`${router.url}/dashboard/settings`);
    await page.getByRole('form', { name: schema.groups[0]!.title }).waitFor();
    // Groups in the schema's order, each setting with its description.
    const titles = await page.locator('main section.card h2').allTextContents();
    expect(titles).toEqual(schema.groups.map((g) => g.title));
    for (const g of schema.groups) {
      for (const s of g.settings) {
        const box = page.getByRole('form', { name: g.title }).locator(`[data-setting="${s.key}"]`);
        expect(await box.count(), s.key).toBe(1);
        expect(await box.textContent(), s.key).toContain(s.description);
      }
    }
    // Typed controls and defaults.
    const requireLogin = page.getByRole('switch', { name: 'requireLogin' });
    expect(await requireLogin.isChecked()).toBe(true);
    expect(await page.locator('[data-setting="requireLogin"]').textContent()).toContain('Default: on');
    const cooldown = page.getByRole('spinbutton', { name: /breakerCooldownMs/ });
    expect(await cooldown.getAttribute('min')).toBe('100');
    expect(await cooldown.getAttribute('max')).toBe('3600000');
    expect(await page.locator('[data-setting="breakerCooldownMs"]').textContent()).toContain('Default: 30,000 ms');
    expect(await page.locator('[data-setting="maxRequestBodyBytes"]').textContent()).toContain('Default: 33,554,432 bytes (32 MiB)');
    const durability = page.getByRole('combobox', { name: /usageDurability/ });
    expect(await durability.locator('option').allTextContents()).toEqual(['batched', 'reply']);
    expect(await page.getByLabel(/telegramBotToken/).getAttribute('type')).toBe('password');
    expect(await page.getByLabel(/cloudSync\.secret|^secret/).first().getAttribute('type')).toBe('password');
    expect(await page.locator('[data-setting="allowedOrigins"] textarea').count()).toBe(1);
    await page.screenshot({ path: join(SHOTS, 'settings.png') });

    // A value out of its bounds is refused by the control itself; a good one is saved.
    const routing = page.getByRole('form', { name: 'Routing and resilience' });
    const threshold = routing.getByRole('spinbutton', { name: /breakerFailureThreshold/ });
    await threshold.fill('0');
    await routing.getByRole('button', { name: /^Save/ }).click();
    expect(await threshold.evaluate((el) => (el as HTMLInputElement).validity.rangeUnderflow)).toBe(true);
    expect((await router.manage('GET', '/api/settings')).json.breakerFailureThreshold).toBe(5);
    await threshold.fill('7');
    await routing.getByRole('combobox', { name: /accountStrategy/ }).selectOption('round-robin');
    await routing.getByRole('button', { name: /^Save/ }).click();
    await routing.getByRole('status').waitFor();
    const after = (await router.manage('GET', '/api/settings')).json;
    expect(after).toMatchObject({ breakerFailureThreshold: 7, accountStrategy: 'round-robin', requireLogin: true });

    // A switch and a sub-setting of an object setting.
    const capture = page.getByRole('form', { name: 'Traffic capture' });
    await capture.getByRole('switch', { name: 'captureTraffic' }).check();
    await capture.getByRole('button', { name: /^Save/ }).click();
    await capture.getByRole('status').waitFor();
    const compression = page.getByRole('form', { name: 'Context compression' });
    await compression.getByRole('switch', { name: 'enabled' }).check();
    await compression.getByRole('spinbutton', { name: /toolOutputMaxTokens/ }).fill('3000');
    await compression.getByRole('button', { name: /^Save/ }).click();
    await compression.getByRole('status').waitFor();
    const saved = (await router.manage('GET', '/api/settings')).json;
    expect(saved.captureTraffic).toBe(true);
    expect(saved.compression).toMatchObject({ enabled: true, toolOutputMaxTokens: 3000, reserveOutputTokens: 1024 });
  });

  it("keeps a request's detail on the request opened while new requests arrive", async () => {
    await router.addConnection({ provider: 'openai', name: 'main', apiKey: 'sk-mock-reach-for', providerSpecificData: { baseUrl: mock.openaiBase } });
    const key = (await router.manage('POST', '/api/keys', { name: 'traffic', scopes: ['proxy'] })).json.key as string;
    const send = async (model: string) => {
      const res = await fetch(`${router.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model, messages: [{ role: 'user', content: 'Hi' }] }),
      });
      expect(res.status, await res.text()).toBe(200);
      return res.headers.get('x-router-trace-id')!;
    };
    const opened = await send('openai/gpt-4o-mini');
    await expect.poll(async () => (await router.manage('GET', '/api/logs?limit=10')).json.logs.length).toBe(1);
    await page.goto(`${router.url}/dashboard/requests`);
    const rows = page.locator('table.log tbody tr');
    await expect.poll(() => rows.count(), { timeout: 10_000 }).toBe(1);
    await rows.first().getByRole('link').click();
    await page.getByRole('heading', { name: 'Attempts' }).waitFor();
    await page.locator('.facts').first().getByText('openai/gpt-4o-mini').waitFor();
    for (let i = 0; i < 3; i++) await send('openai/gpt-4o');
    await expect.poll(async () => (await router.manage('GET', '/api/logs?limit=10')).json.logs.length).toBe(4);
    // The live feed has delivered the new requests by now; the page still shows the one opened.
    await page.waitForTimeout(1000);
    expect(new URL(page.url()).pathname).toBe(`/dashboard/requests/${opened}`);
    expect(await page.locator('main').textContent()).toContain(`trace ${opened}`);
    const facts = await page.locator('.facts').allTextContents();
    expect(facts).toHaveLength(1);
    expect(facts[0]).toContain('openai/gpt-4o-mini');
  });
});
