/**
 * Issue 15 item 1: `router status` tells the truth, and the lifecycle commands speak JSON. Real processes
 * (`node bin/router.js`) against real daemons, each on its own temp home and port.
 */
import { readFileSync } from 'node:fs';
import { execa } from 'execa';
import { afterAll, describe, expect, it, type TestContext } from 'vitest';
import { startMockUpstream, type MockUpstream } from '../mocks/upstream.js';
import {
  BIN,
  PACKAGE_VERSION,
  REPO_ROOT,
  cleanupAll,
  cleanupHome,
  describeResult,
  freePort,
  processRunning,
  readPid,
  runRouter,
  tempHome,
  trackPid,
  waitForExit,
} from '../support/cli.js';
import { startRouter } from '../support/router-daemon.js';

afterAll(cleanupAll);

function homeFor(ctx: TestContext): string {
  const home = tempHome();
  ctx.onTestFinished(() => cleanupHome(home));
  return home;
}

describe.concurrent('router status, start, stop tell the truth', () => {
  it('start --json, status with home/pid/url/version, stop --json', async (ctx) => {
    const home = homeFor(ctx);
    const port = String(await freePort());
    const started = await runRouter(['start', '--json', '--home', home, '--port', port]);
    expect(started.exitCode, describeResult(started)).toBe(0);
    const s = JSON.parse(started.stdout);
    trackPid(s.pid);
    expect(s).toEqual({ url: `http://127.0.0.1:${port}`, pid: readPid(home) });

    const again = await runRouter(['start', '--json', '--home', home, '--port', port]);
    expect(JSON.parse(again.stdout)).toEqual({ url: s.url, pid: s.pid, alreadyRunning: true });

    const st = await runRouter(['status', '--json', '--home', home]);
    expect(st.exitCode, describeResult(st)).toBe(0);
    expect(JSON.parse(st.stdout)).toEqual({
      running: true,
      accepted: true,
      pid: s.pid,
      url: s.url,
      version: PACKAGE_VERSION,
      uptimeSeconds: expect.any(Number),
      home,
      mode: 'single',
      nodeId: expect.stringMatching(/^node-[0-9a-f]{8}$/),
    });
    const human = await runRouter(['status', '--home', home]);
    expect(human.stdout).toContain(`router is running at ${s.url}`);
    expect(human.stdout).toMatch(new RegExp(`pid\\s+${s.pid}`));
    expect(human.stdout).toMatch(new RegExp(`version\\s+${PACKAGE_VERSION.replace(/\./g, '\\.')}`));
    expect(human.stdout).toMatch(new RegExp(`home\\s+${home}\\n`));

    const stopped = await runRouter(['stop', '--json', '--home', home]);
    expect(stopped.exitCode, describeResult(stopped)).toBe(0);
    expect(JSON.parse(stopped.stdout)).toEqual({ stopped: true, pid: s.pid });
    const none = await runRouter(['stop', '--json', '--home', home]);
    expect(JSON.parse(none.stdout)).toEqual({ stopped: false, pid: null });
  });

  it('a daemon that answers but refuses this home is "running, but not accepted", not "not running"', async (ctx) => {
    const other = homeFor(ctx);
    const router = await startRouter();
    ctx.onTestFinished(() => router.stop());
    const args = ['--home', other, '--port', String(router.port)];
    const human = await runRouter(['status', ...args]);
    expect(human.exitCode, describeResult(human)).toBe(1);
    expect(human.stdout).not.toMatch(/not running/);
    expect(human.stdout).toMatch(/running at http:\/\/127\.0\.0\.1:\d+ \(version [\d.]+\), but this home's CLI token is not accepted/);
    const j = await runRouter(['status', '--json', ...args]);
    expect(JSON.parse(j.stdout)).toMatchObject({ running: true, accepted: false, url: router.url, version: PACKAGE_VERSION });
    // and nothing answers on a free port: not running
    const free = await runRouter(['status', '--json', '--home', other, '--port', String(await freePort())]);
    expect([free.exitCode, JSON.parse(free.stdout).running]).toEqual([1, false]);
  });

  it('stop says what it waits for while in-flight requests drain', async (ctx) => {
    const home = homeFor(ctx);
    const mock: MockUpstream = await startMockUpstream();
    ctx.onTestFinished(() => mock.close());
    // Long enough to still be in flight when a slow machine gets `router stop` going (1.5 s was not, under load).
    mock.handle(() => ({ type: 'delay', ms: 5_000 }));
    const port = String(await freePort());
    const started = await runRouter(['start', '--json', '--home', home, '--port', port]);
    const { url, pid } = JSON.parse(started.stdout);
    trackPid(pid);
    const key = JSON.parse((await runRouter(['keys', 'add', '--name', 'k', '--json', '--home', home])).stdout).key;
    const conn = await runRouter(['providers', 'add', 'openai', '--api-key', 'sk-test', '--base-url', `${mock.url}/v1`, '--home', home]);
    expect(conn.exitCode, describeResult(conn)).toBe(0);
    const slow = fetch(`${url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] }),
    });
    await new Promise((r) => setTimeout(r, 400));
    const stopped = await runRouter(['stop', '--home', home]);
    expect(stopped.exitCode, describeResult(stopped)).toBe(0);
    expect(stopped.stderr).toMatch(/^waiting for 1 in-flight request to finish, up to 10 s\.\.\.$/m);
    expect((await slow).status).toBe(200);
  });

  it('start --foreground runs the daemon entry as a child; SIGTERM to the CLI stops it gracefully', async (ctx) => {
    const home = homeFor(ctx);
    const port = String(await freePort());
    const cli = execa(process.execPath, [BIN, 'start', '--foreground', '--json', '--home', home, '--port', port], {
      cwd: REPO_ROOT,
      reject: false,
      stdin: 'ignore',
      env: { ROUTER_HOME: '', NODE_OPTIONS: '' },
    });
    let out = '';
    let log = '';
    cli.stdout!.on('data', (c: Buffer) => (out += c.toString()));
    cli.stderr!.on('data', (c: Buffer) => (log += c.toString()));
    const deadline = Date.now() + 20_000;
    while (!out.includes('\n') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    // stdout holds the JSON object only; the daemon's log is echoed to stderr
    const { pid, url } = JSON.parse(out);
    trackPid(pid);
    expect(url).toBe(`http://127.0.0.1:${port}`);
    // A child process running the daemon's own entry, not the CLI process importing daemon code.
    expect(pid).not.toBe(cli.pid);
    expect(readFileSync(`/proc/${pid}/cmdline`, 'utf8')).toMatch(/dist\/daemon\/entry\.js\0--foreground/);
    expect((await fetch(`${url}/api/health`)).status).toBe(200);
    cli.kill('SIGTERM');
    const r = await cli;
    expect(r.exitCode, `${r.stdout}\n${r.stderr}`).toBe(0);
    expect(await waitForExit(pid)).toBe(true);
    expect(processRunning(pid)).toBe(false);
    // the log was echoed to the terminal
    expect(out.trim().split('\n')).toHaveLength(1);
    expect(log).toMatch(/INFO\s+listening/);
    expect(log).toMatch(/INFO\s+stopped/);
  });
});
