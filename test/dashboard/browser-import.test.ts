/**
 * Importing a coding CLI's login from the dashboard's Providers page, in Chromium: a fake machine (temp
 * HOME with a Claude Code credentials file, fake keychain programs) as in test/imports; discover lists it,
 * the user ticks it, import makes the connection. Skipped without Chromium (the run's summary says so).
 */
import { existsSync } from 'node:fs';
import { type Browser, chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { claudeFile, type FakeMachine, fakeMachine, manageAs } from '../imports/fixtures.js';
import { startRouter, type RouterProcess } from '../support/router-daemon.js';

const CHROMIUM =
  process.env.ROUTER_TEST_NO_BROWSER === '1' ? undefined : ['/usr/bin/chromium', '/usr/bin/chromium-browser'].find((p) => existsSync(p));
const PASSWORD = 'import-pass-123';

let machine: FakeMachine;
let router: RouterProcess;
let browser: Browser;

describe.skipIf(!CHROMIUM)('importing CLI logins from the dashboard', () => {
  beforeAll(async () => {
    machine = fakeMachine();
    machine.writeFile('.claude/.credentials.json', claudeFile('sk-ant-oat01-from-file'));
    router = await startRouter({ env: machine.env({ ROUTER_KEYCHAIN_BACKEND: 'macos' }) });
    expect((await manageAs(router, machine)('PUT', '/api/auth/password', { password: PASSWORD })).status).toBe(204);
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await router?.stop();
  });

  it('discovers the login, imports the ticked one, and lists the new connection', async () => {
    const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    await page.goto(router.url);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Log in' }).click();
    await page.getByRole('heading', { name: 'Home', level: 1 }).waitFor();
    await page.goto(`${router.url}/dashboard/providers`);
    await page.getByRole('button', { name: 'Look for logins on this machine' }).click();
    const box = page.getByRole('checkbox', { name: /claude-code: claude-max/ });
    await box.waitFor();
    expect(await page.getByRole('button', { name: 'Import selected' }).isDisabled()).toBe(true);
    await box.check();
    await page.getByRole('button', { name: 'Import selected' }).click();
    await expect.poll(() => page.getByRole('status').first().textContent()).toMatch(/^Imported 1/);
    await page.getByRole('cell', { name: 'claude-code', exact: true }).first().waitFor();
    // Nothing of the token reaches the page.
    expect(await page.locator('main').textContent()).not.toContain('sk-ant-oat01-from-file');
    await page.close();
  });
});
