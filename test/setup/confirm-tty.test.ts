/**
 * `router setup` and `router setup --undo` at a real terminal (tmux, a pseudo-terminal), without --yes: the
 * summary is shown, then one question; answering no changes nothing (no settings written, no keys, no
 * accounts, exit 1), answering yes applies and proves. The agent is the stand-in `claude` of fake-agent.mjs,
 * the provider key is in the environment pointing at the mock upstream.
 */
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startMockUpstream, type MockUpstream } from '../mocks/upstream.js';
import { BIN, describeResult, freePort, killDaemonOf, runRouter } from '../support/cli.js';
import { HAS_TMUX, tmuxOn, waitScreen as waitFor } from '../support/tmux.js';

if (!HAS_TMUX) console.warn('test/setup/confirm-tty.test.ts skipped: tmux is not installed (.ci/run installs it)');

const SOCKET = `router-setup-tty-${process.pid}`;
const tmux = tmuxOn(SOCKET);
/** The whole pane, scrollback included, wrapped lines joined. */
const screen = (target: string) => tmux('capture-pane', '-p', '-J', '-S', '-2000', '-t', target);
const waitScreen = (target: string, pred: (s: string) => boolean, what: string, ms = 60_000) => waitFor(() => screen(target), pred, what, ms);

const CLAUDE_BEFORE = '{\n  "model": "opus"\n}\n';

describe.skipIf(!HAS_TMUX)('router setup at a terminal', () => {
  let root: string;
  let home: string;
  let port: number;
  let mock: MockUpstream;
  let env: Record<string, string>;
  let script: string;
  let runs = 0;
  const claude = () => join(home, '.claude', 'settings.json');
  const router = (args: string[]) => runRouter([...args, '--port', String(port)], { env, timeoutMs: 60_000 });
  const state = async () => ({
    keys: JSON.parse((await router(['keys', 'list', '--json'])).stdout).length,
    connections: JSON.parse((await router(['providers', 'list', '--json'])).stdout).length,
  });

  /** Runs `router <args>` in a new 160x50 terminal; the pane prints `__EXIT__ <code>` when it ends. */
  function launch(args: string): string {
    const name = `run${++runs}`;
    tmux('new-session', '-d', '-s', name, '-x', '160', '-y', '50', `${script} ${args}; echo "__EXIT__ $?"; sleep 120`);
    return name;
  }

  beforeAll(async () => {
    root = mkdtempSync(join(tmpdir(), 'router-setup-tty-'));
    home = join(root, 'home');
    const binDir = join(root, 'bin');
    mkdirSync(join(home, '.tmp'), { recursive: true });
    mkdirSync(binDir);
    symlinkSync(fileURLToPath(new URL('./fake-agent.mjs', import.meta.url)), join(binDir, 'claude'));
    port = await freePort();
    mock = await startMockUpstream();
    env = {
      HOME: home,
      PATH: `${binDir}:${process.env.PATH}`,
      TMPDIR: join(home, '.tmp'),
      ROUTER_KEYCHAIN_BACKEND: 'none',
      ANTHROPIC_API_KEY: 'sk-test-anthropic',
      ANTHROPIC_BASE_URL: mock.url,
    };
    // The terminal's shell gets the same environment through a launcher (tmux passes no environment of ours).
    script = join(root, 'router.sh');
    const exports = Object.entries(env).map(([k, v]) => `export ${k}='${v}'`).join('\n');
    writeFileSync(script, `#!/bin/sh\nunset ROUTER_HOME ROUTER_HOST ROUTER_PORT NODE_OPTIONS CI\n${exports}\nexec '${process.execPath}' '${BIN}' "$@" --port ${port}\n`);
    chmodSync(script, 0o755);
    mkdirSync(dirname(claude()), { recursive: true });
    writeFileSync(claude(), CLAUDE_BEFORE);
  }, 60_000);

  afterAll(async () => {
    spawnSync('tmux', ['-L', SOCKET, 'kill-server']);
    if (env) await router(['stop']).catch(() => undefined);
    if (home) await killDaemonOf(join(home, '.router'));
    await mock?.close();
    if (root) rmSync(root, { recursive: true, force: true });
  });

  it('answering no changes nothing', async () => {
    const t = launch('setup');
    const asked = await waitScreen(t, (s) => s.includes('Go ahead? [y/N]'), 'the question');
    // The summary came first: the agent, the credential by its variable's name, never the key.
    expect(asked).toMatch(/Claude Code .*: point it at router/);
    expect(asked).toContain('ANTHROPIC_API_KEY (anthropic at ');
    expect(asked).not.toContain('sk-test-anthropic');
    tmux('send-keys', '-t', t, 'n', 'Enter');
    const done = await waitScreen(t, (s) => s.includes('__EXIT__'), 'the end');
    expect(done).toContain('nothing changed');
    expect(done).toContain('__EXIT__ 1');
    expect(readFileSync(claude(), 'utf8')).toBe(CLAUDE_BEFORE);
    expect(await state()).toEqual({ keys: 0, connections: 0 });
  }, 120_000);

  it('answering yes applies: the account is imported, the agent configured and proven', async () => {
    const t = launch('setup');
    await waitScreen(t, (s) => s.includes('Go ahead? [y/N]'), 'the question');
    tmux('send-keys', '-t', t, 'y', 'Enter');
    const done = await waitScreen(t, (s) => s.includes('__EXIT__'), 'the end', 120_000);
    expect(done, done).toContain('__EXIT__ 0');
    // The result table (drawn one field a line when the terminal is narrower than its rows).
    expect(done).toMatch(/ANTHROPIC_API_KEY\s+anthropic\s+ok/);
    expect(done).toMatch(/Claude Code[\s\S]*RESULT\s+ok[\s\S]*answered through router/);
    const settings = JSON.parse(readFileSync(claude(), 'utf8'));
    expect(settings).toMatchObject({ model: 'opus', env: { ANTHROPIC_BASE_URL: `http://127.0.0.1:${port}` } });
    expect(await state()).toEqual({ keys: 1, connections: 1 });
  }, 180_000);

  it('undo asks too: no keeps the settings, yes restores them byte for byte', async () => {
    const written = readFileSync(claude(), 'utf8');
    const no = launch('setup --undo');
    const asked = await waitScreen(no, (s) => /Undo router setup of .*\? \[y\/N\]/.test(s), 'the undo question');
    expect(asked).toContain(`restore ${claude()}`);
    tmux('send-keys', '-t', no, 'n', 'Enter');
    const kept = await waitScreen(no, (s) => s.includes('__EXIT__'), 'the end');
    expect(kept).toContain('nothing restored');
    expect(kept).toContain('__EXIT__ 1');
    expect(readFileSync(claude(), 'utf8')).toBe(written);

    const yes = launch('setup --undo');
    await waitScreen(yes, (s) => /Undo router setup of .*\? \[y\/N\]/.test(s), 'the undo question');
    tmux('send-keys', '-t', yes, 'y', 'Enter');
    const done = await waitScreen(yes, (s) => s.includes('__EXIT__'), 'the end');
    expect(done).toContain('__EXIT__ 0');
    expect(readFileSync(claude(), 'utf8')).toBe(CLAUDE_BEFORE);
    const after = await state();
    expect(after.keys, describeResult(await router(['keys', 'list']))).toBe(0);
  }, 120_000);
});
