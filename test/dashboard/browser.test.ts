/**
 * The web dashboard in a real browser: Debian's Chromium driven by playwright-core (no browser download;
 * `.ci/run` installs the package). The whole path a user takes: log in, add a provider node and a
 * connection (the mock upstream), create a key and use it with the `openai` SDK, create a combo (with an
 * inline validation message first), send traffic and watch the usage numbers, the chart and the request
 * log update live, open a request's detail (captured trace, Server-Timing), stream in the playground,
 * switch theme, use the keyboard and a narrow window, log out.
 * Screenshots of every page go to a temp folder, or to docs/dashboard/ with ROUTER_DASHBOARD_SCREENSHOTS=1.
 * Without Chromium the suite is skipped, and the run's summary line names it (summary-reporter.ts).
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import OpenAI from 'openai';
import { type Browser, chromium, type Locator, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mockEndpoints, type OAuthMock, startOAuthMock } from '../mocks/oauth.js';
import { type MockUpstream, startMockUpstream } from '../mocks/upstream.js';
import { freePort } from '../support/cli.js';
import { startRouter, type RouterProcess } from '../support/router-daemon.js';

// ROUTER_TEST_NO_BROWSER=1 plays a machine without Chromium (the skip must show in the run's summary).
const CHROMIUM = process.env.ROUTER_TEST_NO_BROWSER === '1' ? undefined : ['/usr/bin/chromium', '/usr/bin/chromium-browser'].find((p) => existsSync(p));
if (!CHROMIUM) console.warn('test/dashboard/browser.test.ts skipped: Chromium is not installed (`apt-get install -y chromium`; .ci/run does it)');

const PASSWORD = 'browser-pass-123';
const DOCS = process.env.ROUTER_DASHBOARD_SCREENSHOTS === '1';
const SHOTS = DOCS ? fileURLToPath(new URL('../../docs/dashboard/', import.meta.url)) : mkdtempSync(join(tmpdir(), 'router-shots-'));

let router: RouterProcess;
let mock: MockUpstream;
let oauth: OAuthMock;
let browser: Browser;
let page: Page;
let apiKey: string;
const pageErrors: string[] = [];

async function shot(name: string, p: Page = page): Promise<void> {
  await p.evaluate(() => window.scrollTo(0, 0));
  await p.waitForTimeout(150);
  await p.screenshot({ path: join(SHOTS, `${name}.png`) });
}

/** A screenshot of one part of the page (a section below the fold). */
async function shotOf(part: Locator, name: string): Promise<void> {
  // A window tall enough for the whole section, so the sticky header does not cover part of it.
  await page.setViewportSize({ width: 1280, height: 1600 });
  await part.evaluate((el) => window.scrollTo(0, el.getBoundingClientRect().top + window.scrollY - 80));
  await page.waitForTimeout(150);
  await part.screenshot({ path: join(SHOTS, `${name}.png`) });
  await page.setViewportSize({ width: 1280, height: 800 });
}

async function go(path: string): Promise<void> {
  await page.goto(`${router.url}${path}`);
  await page.getByRole('heading', { level: 1 }).waitFor();
}

describe.skipIf(!CHROMIUM)('the web dashboard in Chromium', () => {
  beforeAll(async () => {
    mkdirSync(SHOTS, { recursive: true });
    mock = await startMockUpstream();
    oauth = await startOAuthMock();
    router = await startRouter();
    expect((await router.manage('PUT', '/api/auth/password', { password: PASSWORD })).status).toBe(204);
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, colorScheme: 'light' });
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: router.url });
    page = await context.newPage();
    page.on('pageerror', (e) => pageErrors.push(e.message));
    // A CSP violation (an inline script or a foreign origin) is reported on the console.
    page.on('console', (m) => {
      if (/Content Security Policy/i.test(m.text())) pageErrors.push(m.text());
    });
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await router?.stop();
    await mock?.close();
    await oauth?.close();
    if (!DOCS) rmSync(SHOTS, { recursive: true, force: true });
  });

  it('shows the login page, refuses a wrong password with the daemon\'s message, and logs in', async () => {
    await page.goto(router.url);
    await page.getByLabel('Password').waitFor();
    await shot('login');
    await page.getByLabel('Password').fill('not-the-password');
    await page.getByRole('button', { name: 'Log in' }).click();
    await expect.poll(() => page.getByRole('alert').textContent()).toContain('Wrong password');
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Log in' }).click();
    await page.getByRole('heading', { name: 'Home', level: 1 }).waitFor();
    await expect.poll(() => page.locator('.live').textContent()).toBe('live');
    await expect(page.getByText('No provider connection yet.')).toBeTruthy();
    await shot('home-empty');
  });

  it('adds a provider node and a connection to the mock upstream, and tests it', async () => {
    await go('/dashboard/providers');
    const nodeForm = page.getByRole('form', { name: 'Add a provider node' });
    await nodeForm.getByLabel('Node name').fill('Mock');
    await nodeForm.getByLabel('Prefix').fill('mock');
    await nodeForm.getByLabel('Base URL').fill(mock.openaiBase);
    await nodeForm.getByRole('button', { name: 'Add node' }).click();
    await page.getByRole('cell', { name: 'mock', exact: true }).waitFor();
    const connForm = page.getByRole('form', { name: 'Add a connection' });
    await connForm.getByLabel('Provider').selectOption('mock');
    await connForm.getByLabel('Name').fill('mock-main');
    await connForm.getByLabel('API key').fill('sk-mock-123');
    await connForm.getByRole('button', { name: 'Add connection' }).click();
    await page.getByRole('cell', { name: 'mock-main', exact: true }).first().waitFor();
    await page.getByRole('button', { name: 'Test', exact: true }).click();
    await expect.poll(() => page.getByRole('status').first().textContent()).toMatch(/^OK/);
    const conns = await router.manage('GET', '/api/providers');
    expect(conns.json.connections.map((c: { name: string }) => c.name)).toEqual(['mock-main']);
    await shot('providers');
  });

  it('logs in to OAuth providers from the Providers page: a PKCE browser login, a device code, a token import', async () => {
    // The logins' endpoints are the mock authorization server (test/mocks/oauth.ts), as in test/oauth.
    const endpoints = { codex: mockEndpoints(oauth, mock.openaiBase), 'qwen-code': mockEndpoints(oauth), windsurf: { apiBaseUrl: mock.openaiBase } };
    expect((await router.manage('PATCH', '/api/settings', { oauthEndpoints: endpoints })).status).toBe(200);
    await go('/dashboard/providers');
    const accounts = page.getByRole('region', { name: 'Subscription accounts' });
    const connections = page.getByRole('region', { name: 'Connections' });
    // Browser login: the provider's page opens in a new window, which the mock redirects to router's listener.
    await accounts.getByRole('button', { name: 'Log in with codex' }).click();
    const login = page.getByRole('form', { name: 'Log in with codex' });
    await login.getByLabel('Callback port').fill(String(await freePort()));
    const popup = page.context().waitForEvent('page');
    await login.getByRole('button', { name: 'Open the login page' }).click();
    await expect.poll(() => login.getByRole('status').textContent()).toContain('Waiting for the login');
    const tab = await popup;
    await tab.getByText('Logged in').first().waitFor();
    expect(new URL(tab.url()).hostname).toBe('localhost');
    await expect.poll(() => login.getByRole('status').textContent(), { timeout: 10_000 }).toMatch(/^Logged in: connection “.+” added\.$/);
    await tab.close();
    const exchange = oauth.requests.filter((r) => r.path === '/token' && r.fields.grant_type === 'authorization_code');
    expect(exchange).toHaveLength(1);
    expect(exchange[0]!.fields.code_verifier).toBeTruthy();
    await connections.getByRole('cell', { name: 'codex', exact: true }).first().waitFor();

    // Device login: Cancel abandons it at the daemon (POST cancel), so polling stops for good.
    oauth.deviceScript = Array(50).fill('authorization_pending');
    await accounts.getByRole('button', { name: 'Log in with qwen-code' }).click();
    const device = page.getByRole('region', { name: 'Log in with qwen-code' });
    await device.getByRole('button', { name: 'Get a login code' }).click();
    await expect.poll(() => device.getByRole('status').textContent()).toContain('Waiting for the code');
    const devicePolls = () => oauth.requests.filter((r) => r.path === '/token' && String(r.fields.grant_type).includes('device_code')).length;
    await expect.poll(devicePolls, { timeout: 5000 }).toBeGreaterThan(0);
    await device.getByRole('button', { name: 'Cancel' }).click();
    await expect.poll(() => device.getByRole('status').textContent()).toBe('Cancelled: router no longer waits for this login.');
    const polled = devicePolls();
    await page.waitForTimeout(2500);
    expect(devicePolls()).toBe(polled);
    // Then a login that completes: the code and where to enter it, polled at the interval, slower after slow_down.
    oauth.deviceScript = ['authorization_pending', 'slow_down'];
    await device.getByRole('button', { name: 'Get a login code' }).click();
    expect((await device.getByTestId('user-code').textContent())?.trim()).toBe('ABCD-1234');
    expect(await device.getByRole('link', { name: `${oauth.url}/device` }).getAttribute('href')).toBe(`${oauth.url}/device`);
    await expect.poll(() => device.getByRole('status').textContent(), { timeout: 10_000 }).toContain('now every 6 s');
    await expect.poll(() => device.getByRole('status').textContent(), { timeout: 15_000 }).toMatch(/^Logged in: connection/);
    await connections.getByRole('cell', { name: 'qwen-code', exact: true }).first().waitFor();

    // Token import; windsurf's browser login is retired, so it offers the import only.
    expect(await accounts.getByRole('button', { name: 'Log in with windsurf' }).count()).toBe(0);
    await accounts.getByRole('button', { name: 'Import a windsurf token' }).click();
    const form = page.getByRole('form', { name: 'Import a windsurf token' });
    await form.getByLabel('Access token').fill('ws-token-123');
    await form.getByLabel('Connection name').fill('windsurf-import');
    await form.getByLabel('Base URL').fill('ftp://example.com');
    await form.getByRole('button', { name: 'Import token' }).click();
    // The daemon's 400 names baseUrl; its message shows under that field.
    await expect.poll(() => form.locator('label.field', { hasText: 'Base URL' }).locator('.field-error').textContent()).toContain('must be an http(s) URL');
    await form.getByLabel('Base URL').fill(mock.openaiBase);
    await form.getByRole('button', { name: 'Import token' }).click();
    await expect.poll(() => form.getByRole('status').textContent()).toBe('Imported: connection “windsurf-import”.');
    await connections.getByRole('cell', { name: 'windsurf-import', exact: true }).first().waitFor();
    const conns = (await router.manage('GET', '/api/providers')).json.connections as Array<{ provider: string; name: string; accessToken?: string }>;
    expect(conns.map((c) => c.provider).sort()).toEqual(['codex', 'mock', 'qwen-code', 'windsurf'].sort());
    expect(await page.locator('main').textContent()).not.toContain('ws-token-123');
    await shotOf(accounts, 'providers-oauth');
  });

  it('creates a key shown once with a copy button, and the openai SDK works with it', async () => {
    await go('/dashboard/keys');
    await page.getByLabel('Key name').fill('sdk');
    await page.getByRole('button', { name: 'Create key' }).click();
    const shown = page.getByTestId('new-key');
    await shown.waitFor();
    apiKey = (await shown.textContent())!.trim();
    expect(apiKey).toMatch(/^rk_/);
    await page.getByRole('button', { name: 'Copy', exact: true }).click();
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(apiKey);
    await shot('keys-created');
    await page.getByRole('button', { name: 'Done' }).click();
    expect(await page.getByTestId('new-key').count()).toBe(0);
    // The list shows it masked only.
    expect(await page.locator('main').textContent()).not.toContain(apiKey);

    const client = new OpenAI({ baseURL: `${router.url}/v1`, apiKey, maxRetries: 0 });
    const reply = await client.chat.completions.create({ model: 'mock/gpt-4o', messages: [{ role: 'user', content: 'hi' }] });
    expect(reply.choices[0]!.message.content).toBe('Hello from the mock.');
  });

  it('edits a key\'s limits: the form\'s own check and the daemon\'s message inline, then saved', async () => {
    await page.getByRole('button', { name: 'Edit', exact: true }).click();
    const form = page.getByRole('form', { name: 'Edit key sdk' });
    await form.getByRole('button', { name: 'Add token limit' }).click();
    await form.getByLabel('Token limit 1 tokens').fill('many');
    await form.getByRole('button', { name: 'Save', exact: true }).click();
    await expect.poll(() => form.locator('.field-error').first().textContent()).toBe('A whole number of tokens (0: no limit).');
    // A scope the form lets through and the daemon refuses: its 400 names tokenLimits.0.scope, shown there.
    await form.getByLabel('Token limit 1 tokens').fill('500000');
    await form.getByLabel('Token limit 1 counts').selectOption('model');
    await form.getByLabel('Token limit 1 model').fill('mock/gpt#4o');
    await form.getByLabel('Daily request limit').fill('1000');
    await form.getByRole('button', { name: 'Save', exact: true }).click();
    const scopeField = form.locator('label.field', { hasText: 'Token limit 1 model' });
    await expect.poll(() => scopeField.locator('.field-error').textContent()).toContain('scope must be global, provider:<id> or model:<provider>/<model>');
    await form.getByLabel('Token limit 1 model').fill('mock/gpt-4o');
    await form.getByRole('button', { name: 'Add token limit' }).click();
    await form.getByLabel('Token limit 2 tokens').fill('2000000');
    await form.getByLabel('Token limit 2 per').selectOption('month');
    await form.getByRole('button', { name: 'Save', exact: true }).click();
    await page.getByRole('cell', { name: '1,000 requests/day, 500,000 tokens/day (model:mock/gpt-4o), 2,000,000 tokens/month' }).waitFor();
    const keys = await router.manage('GET', '/api/keys');
    expect(keys.json.keys[0]).toMatchObject({
      dailyRequestLimit: 1000,
      tokenLimits: [
        { scope: 'model:mock/gpt-4o', period: 'day', limit: 500000 },
        { scope: 'global', period: 'month', limit: 2000000 },
      ],
    });
    await page.getByRole('button', { name: 'Edit', exact: true }).click();
    await shot('keys');
    await page.getByRole('button', { name: 'Edit', exact: true }).click();
  });

  it('creates a combo, showing a validation message inline first', async () => {
    await go('/dashboard/combos');
    await page.getByText('No combo yet.').waitFor();
    await page.getByRole('button', { name: 'New combo' }).click();
    await page.getByLabel('Combo name').fill('team combo');
    await page.getByLabel('Target 1', { exact: true }).fill('mock/gpt-4o');
    await page.getByRole('button', { name: 'Create combo' }).click();
    await expect.poll(() => page.locator('.field-error').first().textContent()).toContain('Letters, digits');
    await page.getByLabel('Combo name').fill('team');
    // An invalid timeout comes back from the daemon as a 400 naming the field; shown under it.
    await page.getByLabel('Per-target timeout (ms)').fill('50');
    await page.getByRole('button', { name: 'Create combo' }).click();
    await expect.poll(() => page.locator('.field-error').first().textContent()).toContain('Between 100 and 600000');
    await page.getByLabel('Per-target timeout (ms)').fill('');
    await page.getByRole('button', { name: 'Add target' }).click();
    await page.getByLabel('Target 2', { exact: true }).fill('mock/gpt-4o-mini');
    await page.getByRole('button', { name: 'Create combo' }).click();
    await page.getByRole('cell', { name: 'team', exact: true }).waitFor();
    const combos = await router.manage('GET', '/api/combos');
    expect(combos.json.combos[0]).toMatchObject({ name: 'team', strategy: 'priority', models: [{ model: 'mock/gpt-4o' }, { model: 'mock/gpt-4o-mini' }] });
    await shot('combos');
  });

  it('updates usage, the chart and the request log live as traffic flows, and shows a request\'s detail', async () => {
    expect((await router.manage('PATCH', '/api/settings', { captureTraffic: true })).status).toBe(200);
    await go('/dashboard/usage');
    const requests = page.locator('.stat', { hasText: /^Requests/ }).locator('.stat-value');
    await expect.poll(() => requests.textContent()).toBe('1');
    const client = new OpenAI({ baseURL: `${router.url}/v1`, apiKey, maxRetries: 0 });
    for (let i = 0; i < 3; i++) await client.chat.completions.create({ model: 'team', messages: [{ role: 'user', content: `hello ${i}` }] });
    // No reload: the live channel's request messages refresh the page.
    await expect.poll(() => requests.textContent(), { timeout: 10_000 }).toBe('4');
    await page.getByRole('tab', { name: 'by combo' }).click();
    await page.getByRole('cell', { name: 'team' }).waitFor();
    expect(await page.locator('.chart-box').first().getAttribute('data-points')).not.toBe('0');
    // Charts per key and per combo (GET /api/usage/timeseries?groupBy=key|combo): the key by its name, the
    // direct request (no combo) beside the combo's three.
    await page.getByRole('figure', { name: 'requests by key: sdk' }).waitFor();
    await page.getByRole('figure', { name: 'requests by combo: team, (no combo)' }).waitFor();
    await page.getByLabel('Show', { exact: true }).selectOption('cost');
    await page.getByRole('figure', { name: 'cost (USD) by key: sdk' }).waitFor();
    await page.getByLabel('Show', { exact: true }).selectOption('requests');
    await shotOf(page.getByRole('region', { name: 'By key and by combo' }), 'usage-by-key-combo');
    await shot('usage');
    // Filtered to the combo: only its series is left.
    await page.getByLabel('Combo', { exact: true }).selectOption('team');
    await page.getByRole('figure', { name: 'requests by combo: team', exact: true }).waitFor();
    await page.getByLabel('Combo', { exact: true }).selectOption('');

    await go('/dashboard/requests');
    const rows = page.locator('table.log tbody tr');
    // The four requests so far, loaded once; the next one must appear without a reload.
    await expect.poll(() => rows.count()).toBe(4);
    const before = 4;
    await client.chat.completions.create({ model: 'team', messages: [{ role: 'user', content: 'live row' }] });
    await expect.poll(() => rows.count(), { timeout: 10_000 }).toBe(before + 1);
    await shot('requests');
    await rows.first().getByRole('link').click();
    await page.getByRole('heading', { name: 'Captured trace' }).waitFor();
    await page.getByRole('heading', { name: 'Client request' }).waitFor();
    expect(await page.locator('.facts').first().textContent()).toContain('combo team');
    // Timing from the reply's Server-Timing header, and credentials masked in the captured headers.
    await page.locator('.timing-row', { hasText: 'upstream' }).waitFor();
    expect(await page.getByText("From the reply's Server-Timing header.").count()).toBe(1);
    const trace = await page.locator('main').textContent();
    expect(trace).not.toContain(apiKey);
    expect(trace).not.toContain('sk-mock-123');
    // The translation the request went through (GET /api/translator/history?traceId=...).
    await page.getByText('openai-chat → openai-chat (passed through)').waitFor();
    await shot('request-detail');
  });

  it('streams a reply in the playground and compares two models side by side', async () => {
    await go('/dashboard/playground');
    await page.getByLabel('Model or combo').fill('mock/gpt-4o');
    await page.getByLabel('Message').fill('Say hello');
    mock.enqueue({ type: 'slow-stream', intervalMs: 150, then: { type: 'text', text: 'Streaming one two three four', chunks: 5 } });
    const sent = mock.requests.length;
    await page.getByRole('button', { name: 'Send' }).click();
    const reply = page.getByTestId('reply-0');
    // Partial text shows before the stream ends.
    await expect.poll(() => reply.getAttribute('aria-busy')).toBe('true');
    await expect.poll(async () => ((await reply.textContent()) ?? '').length > 0 && (await reply.getAttribute('aria-busy')) === 'true', { timeout: 5000 }).toBe(true);
    await expect.poll(() => reply.getAttribute('aria-busy'), { timeout: 10_000 }).toBe('false');
    expect((await reply.textContent())?.trim()).toBe('Streaming one two three four');
    expect(mock.requests[sent]!.stream).toBe(true);
    await page.getByLabel('Compare with (optional)').fill('team');
    await page.getByRole('button', { name: 'Send' }).click();
    await expect.poll(() => page.getByTestId('reply-1').textContent(), { timeout: 10_000 }).toBe('Hello from the mock.');
    await page.getByLabel('Preset name').fill('greeting');
    await page.getByRole('button', { name: 'Save as preset' }).click();
    await page.getByRole('button', { name: 'greeting', exact: true }).waitFor();
    await shot('playground');
  });

  it('renders every other page without an error, with empty states that say what to do', async () => {
    for (const id of ['memory', 'guardrails', 'compression', 'cache', 'webhooks', 'resilience', 'insights', 'settings']) {
      await go(`/dashboard/${id}`);
      await page.waitForLoadState('networkidle');
      expect(await page.locator('p.error').count(), id).toBe(0);
      await shot(id);
    }
    await go('/dashboard/webhooks');
    expect(await page.locator('.empty').textContent()).toContain('Add a URL below');
    // Add one, test it, and read its delivery history.
    expect((await router.manage('PATCH', '/api/settings', { allowPrivateWebhookDestinations: true })).status).toBe(200);
    await page.getByLabel('URL').fill(`${mock.url}/hook`);
    await page.getByRole('button', { name: 'Add webhook' }).click();
    await page.getByText('Signing secret (shown once):').waitFor();
    await page.getByRole('button', { name: 'Test', exact: true }).click();
    await page.getByRole('status').filter({ hasText: 'test' }).waitFor();
    await page.getByRole('button', { name: 'History' }).click();
    await page.getByRole('cell', { name: 'test.ping (test)' }).waitFor();
    await shot('webhooks');
    // A daemon refusal is shown in its own words.
    await page.getByLabel('URL').fill('not a url');
    await page.getByRole('button', { name: 'Add webhook' }).click();
    await expect.poll(() => page.locator('.field-error, p.error').first().textContent()).toMatch(/url/i);
    await go('/dashboard/home');
    await shot('home');
  });

  it('works by keyboard, in the dark theme and in a narrow window', async () => {
    await go('/dashboard/home');
    await page.keyboard.press('Tab');
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe('Skip to content');
    await page.keyboard.press('Alt+2');
    await page.getByRole('heading', { name: 'Providers', level: 1 }).waitFor();
    expect(new URL(page.url()).pathname).toBe('/dashboard/providers');
    await page.getByRole('button', { name: /Switch to dark theme/ }).click();
    expect(await page.evaluate(() => document.documentElement.dataset.theme)).toBe('dark');
    await go('/dashboard/home');
    expect(await page.evaluate(() => document.documentElement.dataset.theme)).toBe('dark');
    await shot('home-dark');
    await page.setViewportSize({ width: 420, height: 800 });
    expect(await page.locator('#nav').isVisible()).toBe(false);
    await page.getByRole('button', { name: 'Menu' }).click();
    await page.getByRole('link', { name: 'Keys' }).click();
    await page.getByRole('heading', { name: 'Keys', level: 1 }).waitFor();
    // Nothing wider than the window.
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(420);
    await shot('narrow');
    await page.setViewportSize({ width: 1280, height: 800 });
    await page.getByRole('button', { name: /Switch to light theme/ }).click();
  });

  it('brings the login page back when the session ends elsewhere (a password change ends every session)', async () => {
    await go('/dashboard/home');
    expect((await router.manage('PUT', '/api/auth/password', { password: `${PASSWORD}-new` })).status).toBe(204);
    await page.getByRole('link', { name: 'Keys' }).click();
    await page.getByText('Your session has ended; log in again.').waitFor();
    await page.getByLabel('Password').fill(`${PASSWORD}-new`);
    await page.getByRole('button', { name: 'Log in' }).click();
    await page.getByRole('heading', { level: 1 }).waitFor();
  });

  it('logs out: the login page returns and the session no longer opens management routes', async () => {
    await page.getByRole('button', { name: 'Log out' }).click();
    await page.getByText('You are logged out.').waitFor();
    const status = await page.evaluate(() => fetch('/api/keys').then((r) => r.status));
    expect(status).toBe(401);
    await page.goto(`${router.url}/dashboard/keys`);
    await page.getByLabel('Password').waitFor();
    expect(pageErrors).toEqual([]);
  });
});
