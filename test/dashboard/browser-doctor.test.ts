/**
 * The dashboard home shows the doctor's findings (what `router doctor` prints), in Chromium: a failure
 * with its fix first, and "All checks passed" once it is fixed and checked again. Skipped without Chromium
 * (the run's summary says so).
 */
import { chmodSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { type Browser, chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fakeMachine, manageAs } from '../imports/fixtures.js';
import { startRouter, type RouterProcess } from '../support/router-daemon.js';

const CHROMIUM =
  process.env.ROUTER_TEST_NO_BROWSER === '1' ? undefined : ['/usr/bin/chromium', '/usr/bin/chromium-browser'].find((p) => existsSync(p));
const PASSWORD = 'doctor-pass-123';

let router: RouterProcess;
let browser: Browser;

describe.skipIf(!CHROMIUM)('the doctor on the dashboard home', () => {
  beforeAll(async () => {
    // A HOME of its own: the doctor reads the agents' settings there (none configured).
    const machine = fakeMachine();
    router = await startRouter({ env: machine.env() });
    expect((await manageAs(router, machine)('PUT', '/api/auth/password', { password: PASSWORD })).status).toBe(204);
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await router?.stop();
  });

  it('lists a failed check with its fix, then all passed after the fix', async () => {
    const key = join(router.home, 'router.db');
    chmodSync(key, 0o644);
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    await page.goto(router.url);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Log in' }).click();
    await page.getByRole('heading', { name: 'Home', level: 1 }).waitFor();
    const panel = page.getByRole('region', { name: 'Doctor' });
    const failed = panel.locator('li[data-status="fail"]');
    await failed.first().waitFor();
    expect(await panel.textContent()).toContain('1 problem found');
    expect(await failed.textContent()).toContain(`Fix: chmod 600 '${key}'`);
    expect(await panel.locator('li[data-check="daemon"][data-status="pass"]').count()).toBe(1);
    chmodSync(key, 0o600);
    await panel.getByRole('button', { name: 'Check again' }).click();
    await expect.poll(() => panel.textContent()).toContain('All checks passed');
    expect(await failed.count()).toBe(0);
    await page.close();
  });
});
