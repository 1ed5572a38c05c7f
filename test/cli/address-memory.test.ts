/**
 * Issue 27 item 10: the daemon keeps the address it was started at. `router start --port N` (the README's
 * way) remembers N in the state folder; `router restart` and a later `router start` come back on N, an
 * explicit --port changes it, and a CLI error names the address the daemon really uses. The real CLI and
 * daemon on a fresh state folder, with HOME pointing at a fresh folder too (no CLI config).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { cleanupAll, describeResult, freePort, runRouter, tempHome, trackPid } from '../support/cli.js';

const userHome = mkdtempSync(join(tmpdir(), 'router-user-home-'));
afterAll(async () => {
  await cleanupAll();
  rmSync(userHome, { recursive: true, force: true });
});

/** Runs the CLI as a new user would: a fresh HOME and no XDG config of ours. */
function router(args: string[]) {
  return runRouter(args, { env: { HOME: userHome, XDG_CONFIG_HOME: join(userHome, '.config') }, timeoutMs: 40_000 });
}

async function startedUrl(args: string[]): Promise<string> {
  const r = await router(args);
  expect(r.exitCode, describeResult(r)).toBe(0);
  const j = JSON.parse(r.stdout) as { url: string; pid: number };
  trackPid(j.pid);
  return j.url;
}

describe('the daemon address is remembered in the state folder', () => {
  it('start --port N, restart, stop + start: the same port each time; --port M changes it', { timeout: 120_000 }, async () => {
    const home = tempHome();
    const port = await freePort();
    const url = `http://127.0.0.1:${port}`;
    expect(await startedUrl(['start', '--json', '--home', home, '--port', String(port)])).toBe(url);

    expect(await startedUrl(['restart', '--json', '--home', home])).toBe(url);

    const stopped = await router(['stop', '--home', home]);
    expect(stopped.exitCode, describeResult(stopped)).toBe(0);
    // While stopped, a command names the address the daemon would be at, not the default port.
    const down = await router(['keys', 'list', '--home', home]);
    expect(down.exitCode).toBe(1);
    expect(down.stderr).toContain(`the router daemon is not running at ${url}`);

    expect(await startedUrl(['start', '--json', '--home', home])).toBe(url);

    // An explicit port is the new address, for restart and later starts too.
    const other = await freePort();
    const otherUrl = `http://127.0.0.1:${other}`;
    expect(await startedUrl(['restart', '--json', '--home', home, '--port', String(other)])).toBe(otherUrl);
    await router(['stop', '--home', home]);
    expect(await startedUrl(['start', '--json', '--home', home])).toBe(otherUrl);
    const last = await router(['stop', '--home', home]);
    expect(last.exitCode, describeResult(last)).toBe(0);
  });
});
