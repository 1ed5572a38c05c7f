/**
 * A first start the way a new user makes it: no state folder yet (under HOME, --home with missing parents,
 * ROUTER_HOME), and the README's own command (`npm start -- --port N`) on a fresh HOME. Every other test
 * pre-creates its home; these do not.
 */
import { chmodSync, existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, describe, expect, it, type TestContext } from 'vitest';
import { REPO_ROOT, cleanupAll, cleanupHome, describeResult, freePort, killDaemonOf, pidFromOutput, runRouter, tempHome } from '../support/cli.js';

afterAll(cleanupAll);

/** A temp folder whose state folder (somewhere inside, not created yet) is cleaned up after the test. */
function scratch(ctx: TestContext, state: (base: string) => string): { base: string; state: string } {
  const base = tempHome('router-first-');
  const dir = state(base);
  ctx.onTestFinished(async () => {
    await killDaemonOf(dir);
    await cleanupHome(base);
  });
  return { base, state: dir };
}

const mode = (path: string) => statSync(path).mode & 0o777;

async function health(url: string): Promise<number> {
  return (await fetch(`${url}/api/health`)).status;
}

/** The state folder is 0700 and every private file in it 0600. */
function expectOwnerOnly(state: string): void {
  expect(mode(state).toString(8)).toBe('700');
  for (const name of ['router.db', 'router.log', 'cli-token.salt', 'router.pid', 'router.db-wal', 'router.db-shm']) {
    const path = join(state, name);
    if (existsSync(path)) expect(`${name} ${mode(path).toString(8)}`).toBe(`${name} 600`);
  }
  expect(existsSync(join(state, 'router.db'))).toBe(true);
}

describe.concurrent('first start on a fresh machine', () => {
  it('HOME without ~/.router: start creates it owner-only, answers /api/health, status and stop work', async (ctx) => {
    const { base, state } = scratch(ctx, (b) => join(b, 'home', '.router'));
    const env = { HOME: join(base, 'home') };
    mkdirSync(env.HOME);
    const port = await freePort();
    const r = await runRouter(['start', '--port', String(port)], { env });
    expect(r.exitCode, describeResult(r)).toBe(0);
    pidFromOutput(r.stdout);
    expect(await health(`http://127.0.0.1:${port}`)).toBe(200);
    expectOwnerOnly(state);
    const status = await runRouter(['status'], { env });
    expect(status.exitCode, describeResult(status)).toBe(0);
    const stop = await runRouter(['stop'], { env });
    expect(stop.stdout).toMatch(/router stopped/);
  });

  it('--home with missing parents, and ROUTER_HOME that does not exist', async (ctx) => {
    const { state } = scratch(ctx, (b) => join(b, 'a', 'b', 'c'));
    const port = await freePort();
    const r = await runRouter(['start', '--home', state, '--port', String(port)]);
    expect(r.exitCode, describeResult(r)).toBe(0);
    pidFromOutput(r.stdout);
    expectOwnerOnly(state);
    expect(mode(join(state, '..')).toString(8)).toBe('700');

    const other = scratch(ctx, (b) => join(b, 'env-home'));
    const port2 = await freePort();
    const r2 = await runRouter(['start', '--port', String(port2)], { env: { ROUTER_HOME: other.state } });
    expect(r2.exitCode, describeResult(r2)).toBe(0);
    pidFromOutput(r2.stdout);
    expectOwnerOnly(other.state);
    expect(await health(`http://127.0.0.1:${port2}`)).toBe(200);
  });

  it('commands that only read state on a home that does not exist say what to do, never ENOENT, create nothing', async (ctx) => {
    const { state } = scratch(ctx, (b) => join(b, 'never', 'made'));
    const port = String(await freePort());
    for (const args of [['status'], ['stop'], ['keys', 'list'], ['logs'], ['usage'], ['providers', 'list'], ['token'], ['settings', 'get']]) {
      const r = await runRouter([...args, '--home', state, '--port', port]);
      const text = r.stdout + r.stderr;
      expect(text, `${args.join(' ')}: ${describeResult(r)}`).not.toMatch(/ENOENT|no such file/i);
      expect(text, `${args.join(' ')}: ${describeResult(r)}`).toMatch(/not running|router start/);
    }
    expect(existsSync(state)).toBe(false);
  });

  it('a state folder left readable by others is tightened at start, with a log line', async (ctx) => {
    const { state } = scratch(ctx, (b) => join(b, 'loose'));
    mkdirSync(state, { mode: 0o755 });
    chmodSync(state, 0o755);
    writeFileSync(join(state, 'router.log'), '', { mode: 0o644 });
    chmodSync(join(state, 'router.log'), 0o644);
    const port = await freePort();
    const r = await runRouter(['start', '--home', state, '--port', String(port)]);
    expect(r.exitCode, describeResult(r)).toBe(0);
    pidFromOutput(r.stdout);
    expectOwnerOnly(state);
    expect(readFileSync(join(state, 'router.log'), 'utf8')).toMatch(/readable by others/);
  });

  it("README's first command on a fresh HOME (`npm start -- --port N`), then `router` on the PATH through `npm link`", async (ctx) => {
    const { base, state } = scratch(ctx, (b) => join(b, 'home', '.router'));
    const home = join(base, 'home');
    mkdirSync(home);
    const port = await freePort();
    const env: Record<string, string> = {
      ...(process.env as Record<string, string>),
      HOME: home,
      npm_config_cache: join(base, 'npm-cache'),
      npm_config_prefix: join(base, 'npm-global'),
      npm_config_update_notifier: 'false',
    };
    for (const k of ['ROUTER_HOME', 'ROUTER_HOST', 'ROUTER_PORT']) delete env[k];
    const npm = (args: string[]) => execa('npm', args, { cwd: REPO_ROOT, env, extendEnv: false, reject: false, timeout: 60_000 });
    const started = await npm(['start', '--', '--port', String(port)]);
    expect(started.exitCode, `${started.stdout}\n${started.stderr}`).toBe(0);
    expect(started.stdout).toMatch(new RegExp(`router started at http://127\\.0\\.0\\.1:${port}`));
    pidFromOutput(String(started.stdout));
    expect(await health(`http://127.0.0.1:${port}`)).toBe(200);
    expectOwnerOnly(state);

    const viaScript = await npm(['run', '--silent', 'router', '--', 'status']);
    expect(viaScript.exitCode, `${viaScript.stdout}\n${viaScript.stderr}`).toBe(0);
    expect(viaScript.stdout).toMatch(/router is running/);

    const linked = await npm(['link', '--ignore-scripts']);
    expect(linked.exitCode, `${linked.stdout}\n${linked.stderr}`).toBe(0);
    const status = await execa(join(base, 'npm-global', 'bin', 'router'), ['status'], { env, extendEnv: false, reject: false, timeout: 20_000 });
    expect(status.exitCode, `${status.stdout}\n${status.stderr}`).toBe(0);
    expect(status.stdout).toMatch(/router is running/);
  }, 90_000);
});
