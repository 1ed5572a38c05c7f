/**
 * End to end: the real CLI (`node bin/router.js`, built to dist/) starts, inspects and stops a real detached
 * daemon. Every test uses its own temp state folder and a free port, and afterEach kills whatever a test
 * left running, so a failing test never leaks a daemon.
 */
import { existsSync, writeFileSync } from 'node:fs';
import { connect, createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, describe, expect, it, type TestContext } from 'vitest';
import {
  PACKAGE_VERSION,
  cleanupAll,
  cleanupHome,
  daemonsOf,
  describeResult,
  freePort,
  pidFromOutput,
  processRunning,
  readPid,
  runRouter,
  tempHome,
  urlFromOutput,
  waitForExit,
} from '../support/cli.js';

// Tests run concurrently, so each cleans up only its own home when it finishes (pass or fail);
// afterAll is the backstop for anything tracked by pid alone.
afterAll(cleanupAll);

function homeFor(ctx: TestContext): string {
  const home = tempHome();
  ctx.onTestFinished(() => cleanupHome(home));
  return home;
}

async function startDaemon(home: string, port: number) {
  const r = await runRouter(['start', '--home', home, '--port', String(port)]);
  const pid = pidFromOutput(r.stdout);
  return { r, pid, url: urlFromOutput(r.stdout) };
}

describe.concurrent('router CLI and daemon lifecycle', () => {
  it('start, health, status, keys add, management calls with the key, start again, stop, status', async (ctx) => {
    const home = homeFor(ctx);
    const port = await freePort();
    const { r: started, pid, url } = await startDaemon(home, port);
    expect(started.exitCode, describeResult(started)).toBe(0);
    expect(url).toBe(`http://127.0.0.1:${port}`);
    expect(pid).toBeGreaterThan(0);
    expect(processRunning(pid!)).toBe(true);
    expect(readPid(home)).toBe(pid);

    const health = await fetch(`${url}/api/health`);
    expect(health.status).toBe(200);
    expect(health.headers.get('x-router-version')).toBe(PACKAGE_VERSION);
    expect(await health.json()).toEqual({ status: 'ok', version: PACKAGE_VERSION });

    const status = await runRouter(['status', '--json', '--home', home]);
    expect(status.exitCode, describeResult(status)).toBe(0);
    const st = JSON.parse(status.stdout);
    expect(st).toEqual({ running: true, accepted: true, pid, url, version: PACKAGE_VERSION, uptimeSeconds: expect.any(Number), home, mode: 'single', nodeId: expect.stringMatching(/^node-[0-9a-f]{8}$/) });
    expect(st.uptimeSeconds).toBeGreaterThanOrEqual(0);

    // Options before the command name work as well as after it.
    const before = await runRouter(['--home', home, 'status', '--json']);
    expect(before.exitCode, describeResult(before)).toBe(0);
    expect(JSON.parse(before.stdout)).toMatchObject({ running: true, pid, url });

    const added = await runRouter(['keys', 'add', '--name', 'n', '--scope', 'proxy', '--scope', 'manage', '--json', '--home', home]);
    expect(added.exitCode, describeResult(added)).toBe(0);
    const key = JSON.parse(added.stdout);
    expect(Object.keys(key).sort()).toEqual(['id', 'key', 'name', 'scopes']);
    expect(key).toMatchObject({ name: 'n', scopes: ['proxy', 'manage'] });
    expect(key.key).toMatch(/^rk_/);

    const auth = { authorization: `Bearer ${key.key}` };
    const list = await fetch(`${url}/api/keys`, { headers: auth });
    expect(list.status).toBe(200);
    const listText = await list.text();
    expect(listText).not.toContain(key.key);
    const listed = JSON.parse(listText).keys.find((k: { id: string }) => k.id === key.id);
    expect(listed).toMatchObject({ id: key.id, name: 'n', scopes: ['proxy', 'manage'], isActive: true });
    expect(listed.maskedKey).not.toBe(key.key);
    expect(key.key.startsWith(listed.maskedKey.split('...')[0])).toBe(true);
    expect(listed).not.toHaveProperty('key');

    const settings = await fetch(`${url}/api/settings`, { headers: auth });
    expect(settings.status).toBe(200);
    expect(await settings.json()).toMatchObject({ requireLogin: true });
    // Without the key the same call is refused.
    expect((await fetch(`${url}/api/settings`)).status).toBe(401);

    const again = await runRouter(['start', '--home', home, '--port', String(port)]);
    expect(again.exitCode, describeResult(again)).toBe(0);
    expect(again.stdout).toMatch(/already running/);
    expect(pidFromOutput(again.stdout)).toBe(pid);
    expect(daemonsOf(home)).toEqual([pid]);

    const stopped = await runRouter(['stop', '--home', home]);
    expect(stopped.exitCode, describeResult(stopped)).toBe(0);
    expect(processRunning(pid!)).toBe(false);
    expect(existsSync(join(home, 'router.pid'))).toBe(false);

    const after = await runRouter(['status', '--home', home, '--json']);
    expect(JSON.parse(after.stdout)).toMatchObject({ running: false, pid: null });
  });

  it('two starts launched at the same moment make exactly one daemon', async (ctx) => {
    const home = homeFor(ctx);
    const port = await freePort();
    const args = ['start', '--home', home, '--port', String(port)];
    const [a, b] = await Promise.all([runRouter(args), runRouter(args)]);
    expect(a.exitCode, describeResult(a)).toBe(0);
    expect(b.exitCode, describeResult(b)).toBe(0);
    const pa = pidFromOutput(a.stdout);
    const pb = pidFromOutput(b.stdout);
    expect(pa).toBeDefined();
    expect(pa).toBe(pb);
    expect([a.stdout, b.stdout].filter((s) => /already running/.test(s))).toHaveLength(1);
    expect(daemonsOf(home)).toEqual([pa]);
  });

  it('start on a busy port: one-line error naming the port, the log tail, exit 1, no daemon left', async (ctx) => {
    const home = homeFor(ctx);
    const blocker: Server = createServer();
    await new Promise<void>((r) => blocker.listen(0, '127.0.0.1', r));
    const port = (blocker.address() as { port: number }).port;
    try {
      const r = await runRouter(['start', '--home', home, '--port', String(port)]);
      pidFromOutput(r.stdout);
      expect(r.exitCode, describeResult(r)).toBe(1);
      const [first, ...rest] = r.stderr.trimEnd().split('\n');
      expect(first).toMatch(new RegExp(`^router: .*port ${port}\\b.*in use`));
      expect(first).not.toMatch(/^router: router/); // one prefix, not two
      expect(first).not.toMatch(/\s+at\s+\S+\s+\(/);
      // The log tail follows: the daemon's own record of the failure.
      expect(rest.join('\n')).toMatch(/start failed/);
      expect(r.stdout).toBe('');
      expect(existsSync(join(home, 'router.pid'))).toBe(false);
      await new Promise((res) => setTimeout(res, 200));
      expect(daemonsOf(home)).toEqual([]);
    } finally {
      await new Promise((r) => blocker.close(r));
    }
  });

  it('a stale pid file (its process is dead) does not block start', async (ctx) => {
    const home = homeFor(ctx);
    const port = await freePort();
    const dead = execa(process.execPath, ['-e', '0']);
    await dead;
    const deadPid = dead.pid!;
    expect(processRunning(deadPid)).toBe(false);
    writeFileSync(
      join(home, 'router.pid'),
      JSON.stringify({ pid: deadPid, host: '127.0.0.1', port, url: `http://127.0.0.1:${port}`, startedAt: new Date().toISOString(), version: PACKAGE_VERSION }),
    );
    const { r, pid } = await startDaemon(home, port);
    expect(r.exitCode, describeResult(r)).toBe(0);
    expect(r.stdout).toMatch(/started/);
    expect(pid).not.toBe(deadPid);
    expect(readPid(home)).toBe(pid);
  });

  it('after kill -9 the daemon starts again and a key made before the kill still authenticates', async (ctx) => {
    const home = homeFor(ctx);
    const port = await freePort();
    const first = await startDaemon(home, port);
    expect(first.r.exitCode, describeResult(first.r)).toBe(0);
    const added = await runRouter(['keys', 'add', '--name', 'survivor', '--scope', 'manage', '--json', '--home', home]);
    expect(added.exitCode, describeResult(added)).toBe(0);
    const key = JSON.parse(added.stdout).key as string;

    process.kill(first.pid!, 'SIGKILL');
    expect(await waitForExit(first.pid!)).toBe(true);
    expect(existsSync(join(home, 'router.pid'))).toBe(true); // left behind: stale

    const second = await startDaemon(home, port);
    expect(second.r.exitCode, describeResult(second.r)).toBe(0);
    expect(second.r.stdout).toMatch(/started/);
    expect(second.pid).not.toBe(first.pid);
    const res = await fetch(`${second.url}/api/keys`, { headers: { authorization: `Bearer ${key}` } });
    expect(res.status).toBe(200);
    const names = ((await res.json()) as { keys: Array<{ name: string }> }).keys.map((k) => k.name);
    expect(names).toContain('survivor');
  });

  it('stop when not running: exit 0 and says so', async (ctx) => {
    const home = homeFor(ctx);
    const r = await runRouter(['stop', '--home', home]);
    expect(r.exitCode, describeResult(r)).toBe(0);
    expect(r.stdout).toMatch(/not running/);
  });

  it('usage errors exit 2; --version prints the package version', async (ctx) => {
    const home = homeFor(ctx);
    const cases = [
      ['bogus-command'],
      ['status', '--bogus', '--home', home],
      ['keys', 'add', '--home', home], // --name is required
      ['keys', 'rename', 'only-one-arg', '--home', home],
      ['start', '--home', home, '--port'], // option without its value
    ];
    const results = await Promise.all(cases.map((args) => runRouter(args)));
    results.forEach((r, i) => {
      expect(r.exitCode, `${cases[i]!.join(' ')}\n${describeResult(r)}`).toBe(2);
      expect(r.stderr).toMatch(/error/i);
    });
    expect(daemonsOf(home)).toEqual([]);

    for (const flag of ['--version', '-v']) {
      const v = await runRouter([flag]);
      expect(v.exitCode, describeResult(v)).toBe(0);
      expect(v.stdout.trim()).toBe(PACKAGE_VERSION);
    }
    expect(PACKAGE_VERSION).toMatch(/^\d+\.\d+\.\d+$/);
  });
});

describe('graceful stop (in-process daemon)', () => {
  it('an in-flight slow request completes before the daemon stops, and the stop does not linger after it', async (ctx) => {
    const home = homeFor(ctx);
    const { runDaemon } = await import('../../src/daemon/main.js');
    const { ROUTES } = await import('../../src/daemon/routes.js');
    const { deriveCliToken } = await import('../../src/shared/cli-token.js');
    type Def = (typeof ROUTES)[number];
    let entered!: () => void;
    const inFlight = new Promise<void>((r) => (entered = r));
    let handlerDoneAt = 0;
    // Test-only seam: the daemon serves ROUTES, so a temporary slow route is pushed there before start.
    const slowRoute: Def = {
      method: 'GET',
      path: '/api/test-only/slow',
      tier: 'public',
      tag: 'test',
      summary: 'test-only slow route',
      handler: async () => {
        entered();
        await new Promise((r) => setTimeout(r, 700));
        handlerDoneAt = Date.now();
        return { done: true };
      },
    };
    (ROUTES as Def[]).push(slowRoute);
    let outcome: Awaited<ReturnType<typeof runDaemon>> | undefined;
    const token = () => deriveCliToken(join(home, 'cli-token.salt'))!;
    try {
      outcome = await runDaemon({ home, host: '127.0.0.1', port: 0, graceMs: 8_000 });
      if (outcome.kind !== 'started') throw new Error(`daemon did not start: ${JSON.stringify(outcome)}`);
      const { url, stopped } = outcome;
      let stoppedAt = 0;
      void stopped.then(() => (stoppedAt = Date.now()));

      const slow = fetch(`${url}/api/test-only/slow`).then(async (r) => ({ status: r.status, body: await r.json(), at: Date.now() }));
      await inFlight;
      const ack = await fetch(`${url}/api/system/shutdown`, { method: 'POST', headers: { 'x-router-cli-token': token(), 'content-type': 'application/json' } });
      expect(ack.status).toBe(202);

      const done = await slow;
      expect(done.status).toBe(200);
      expect(done.body).toEqual({ done: true });
      await stopped;
      // The stop waited for the request: it ended after the handler finished (server-side time; the
      // client reads the body in the same process and may get to it a few ms after the stop resolved).
      expect(handlerDoneAt).toBeGreaterThan(0);
      expect(stoppedAt).toBeGreaterThanOrEqual(handlerDoneAt);
      // The finished request's keep-alive connection must not hold the stop (undici keeps it ~4 s).
      expect(stoppedAt - done.at).toBeLessThan(1_500);
      expect(existsSync(join(home, 'router.pid'))).toBe(false);
      const port = Number(new URL(url).port);
      const refused = await new Promise<string>((resolve) => {
        const sock = connect(port, '127.0.0.1');
        sock.once('connect', () => (sock.destroy(), resolve('connected')));
        sock.once('error', (e: NodeJS.ErrnoException) => resolve(e.code ?? 'error'));
      });
      expect(refused).toBe('ECONNREFUSED');
    } finally {
      (ROUTES as Def[]).splice((ROUTES as Def[]).indexOf(slowRoute), 1);
      if (outcome?.kind === 'started' && existsSync(join(home, 'router.pid'))) {
        await fetch(`${outcome.url}/api/system/shutdown`, { method: 'POST', headers: { 'x-router-cli-token': token(), 'content-type': 'application/json' } }).catch(() => {});
        await Promise.race([outcome.stopped, new Promise((r) => setTimeout(r, 10_000))]);
      }
    }
  }, 120_000); // imports and boots the daemon in this process: slow on a loaded machine
});
