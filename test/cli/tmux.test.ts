/**
 * The TUIs in a real pseudo-terminal: `router dashboard` and `router logs -f` run inside tmux (80x24) next
 * to a real daemon with a mock upstream; the screen is read after real traffic, keys are sent as a
 * person would type them, and the terminal must be given back (alternate screen left) on q and Ctrl-C.
 * tmux comes from Debian packages (`.ci/run` installs it when missing). The commands run with CI=true, as
 * they do on a CI machine: Ink would draw nothing but the last frame there, so the CLI must clear it.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startMockUpstream, type MockUpstream } from '../mocks/upstream.js';
import { BIN } from '../support/cli.js';
import { startRouter, type RouterProcess } from '../support/router-daemon.js';
import { HAS_TMUX, tmuxOn, waitScreen as waitFor } from '../support/tmux.js';

if (!HAS_TMUX) console.warn('test/cli/tmux.test.ts skipped: tmux is not installed (.ci/run installs it)');

const SOCKET = `router-test-${process.pid}`;
const tmux = tmuxOn(SOCKET);
const screen = (target: string) => tmux('capture-pane', '-p', '-t', target);
const waitScreen = (target: string, pred: (s: string) => boolean, what: string, ms?: number) => waitFor(() => screen(target), pred, what, ms);

let router: RouterProcess;
let mock: MockUpstream;
let key: string;
let configDir: string;

beforeAll(async () => {
  if (!HAS_TMUX) return;
  configDir = mkdtempSync(join(tmpdir(), 'router-tmux-config-'));
  // keepHome: the restart test starts a new daemon on the same state folder (keys, connections, CLI token).
  [router, mock] = await Promise.all([startRouter({ keepHome: true }), startMockUpstream()]);
  mock.handle((req) => (req.model === 'gpt-fail' || req.model === 'gpt-gap' ? { type: 'status', status: 400, message: 'refused' } : undefined));
  await router.addConnection({ provider: 'openai', name: 'main', apiKey: 'sk-tmux-0123456789', providerSpecificData: { baseUrl: mock.openaiBase } });
  await router.manage('POST', '/api/combos', { name: 'fast', models: ['openai/gpt-4o-mini'] });
  key = await router.createKey(['proxy']);
}, 60_000);

afterAll(async () => {
  if (!HAS_TMUX) return;
  spawnSync('tmux', ['-L', SOCKET, 'kill-server']);
  await Promise.all([router?.stop(), mock?.close()]);
  rmSync(configDir, { recursive: true, force: true });
  if (router) rmSync(router.home, { recursive: true, force: true });
});

/** Starts a CLI command in a new 80x24 tmux window; after it exits the pane prints its exit code. */
function launch(name: string, args: string, env = '') {
  const cmd = `env CI=true ${env} ROUTER_CLI_CONFIG_DIR=${configDir} ${process.execPath} ${BIN} ${args} --home ${router.home}; echo "__EXIT__ $?"; sleep 120`;
  try {
    tmux('new-session', '-d', '-s', name, '-x', '80', '-y', '24', cmd);
  } catch {
    tmux('new-window', '-t', name, cmd);
  }
  return name;
}

async function chat(model: string) {
  const res = await fetch(`${router.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model, messages: [{ role: 'user', content: 'Hi' }] }),
  });
  await res.text();
}

describe.skipIf(!HAS_TMUX)('TUIs in tmux', { timeout: 90_000 }, () => {
  it('router dashboard: live state after real traffic, keys into logs and back, resize, q restores the terminal', async () => {
    const t = launch('dash', 'dashboard');
    let s = await waitScreen(t, (x) => x.includes('router dashboard') && x.includes('● live') && /^openai\s+1\/1\s+closed/m.test(x), 'the dashboard');
    expect(s).toMatch(/^fast \(priority\): openai\/gpt-4o-mini$/m);

    for (const m of ['openai/gpt-4o-mini', 'fast', 'openai/gpt-4.1', 'openai/gpt-fail']) await chat(m);
    s = await waitScreen(t, (x) => /^openai\s+1\/1\s+\S.*\s4\s+1$/m.test(x) && x.includes('400 openai/gpt-fail'), 'the traffic on screen');
    const lines = s.replace(/\n+$/, '').split('\n');
    expect(lines.length).toBeLessThanOrEqual(24);
    for (const l of lines) expect(l.length).toBeLessThanOrEqual(80);
    expect(lines[0]).toMatch(/^router dashboard · http:\/\/127\.0\.0\.1:\d+ · v\d+\.\d+\.\d+ · up \S+.*● live$/);
    expect(s).toMatch(/^daemon {2}pid \d+ .*last min 4 req, 1 err$/m);
    expect(s).toMatch(/^requests\/s \(\d+s\)\s+.*[▁▂▃▄▅▆▇█].*max$/m);
    expect(s).toMatch(/^l logs {2}u usage {2}i inspect {2}r refresh {2}q quit$/m);

    tmux('send-keys', '-t', t, 'l');
    s = await waitScreen(t, (x) => x.includes('router logs · all requests') && x.includes('4 shown') && x.includes('● live'), 'the logs view with its history');
    expect(s).toMatch(/\s400 openai\/gpt-fail\s/);
    expect(s).toMatch(/\s200 openai\/gpt-4o-mini\s/);
    tmux('send-keys', '-t', t, 's');
    await waitScreen(t, (x) => x.includes('status=2xx') && !x.includes('gpt-fail'), 'the status filter');
    tmux('send-keys', '-t', t, 'Escape');
    await waitScreen(t, (x) => x.includes('router dashboard'), 'the dashboard again');

    tmux('resize-window', '-t', t, '-x', '100', '-y', '30');
    s = await waitScreen(t, (x) => x.split('\n')[0]!.length === 100, 'the reflow to 100 columns');
    expect(s.split('\n')[0]).toMatch(/● live$/);

    tmux('send-keys', '-t', t, 'q');
    s = await waitScreen(t, (x) => x.includes('__EXIT__'), 'the exit');
    expect(s).toMatch(/^__EXIT__ 0$/m);
    // The alternate screen was left: the dashboard is gone from the visible screen.
    expect(s).not.toContain('router dashboard');
    expect(tmux('display-message', '-p', '-t', t, '#{alternate_on}').trim()).toBe('0');
    expect(tmux('display-message', '-p', '-t', t, '#{cursor_flag}').trim()).toBe('1');
  });

  it('providers add on a terminal: the hidden prompt keeps its label; a pasted key is not echoed', async () => {
    const t = launch('prompt', `providers add anthropic --name typed --base-url ${mock.anthropicBase}`);
    await waitScreen(t, (x) => x.includes('API key for anthropic'), 'the prompt');
    const secret = 'sk-ant-pasted-0123456789abcdef';
    tmux('send-keys', '-t', t, '-l', secret);
    await new Promise((r) => setTimeout(r, 300));
    let s = screen(t);
    expect(s).toMatch(/^API key for anthropic \(input hidden, paste and press Enter\):\s*$/m);
    expect(s).not.toContain('pasted');
    // a mistyped character and Backspace, then Enter
    tmux('send-keys', '-t', t, '-l', 'x');
    tmux('send-keys', '-t', t, 'BSpace');
    tmux('send-keys', '-t', t, 'Enter');
    s = await waitScreen(t, (x) => x.includes('__EXIT__'), 'the exit');
    expect(s).toMatch(/^__EXIT__ 0$/m);
    expect(s).toMatch(/^API key for anthropic \(input hidden, paste and press Enter\):\s*$/m);
    expect(s).toMatch(/^added connection typed /m);
    expect(s).not.toContain('pasted');
    const { connections } = (await router.manage('GET', '/api/providers')).json;
    const typed = connections.find((c: { name: string }) => c.name === 'typed');
    expect(typed.apiKey).toBe('sk-a...cdef');
    // the key that reaches the upstream is exactly what was pasted (the x was erased)
    const before = mock.requests.length;
    await router.manage('POST', `/api/providers/${typed.id}/test`);
    const sent = mock.requests.slice(before).map((r) => r.headers['x-api-key'] ?? r.headers.authorization);
    expect(sent.some((v) => v === secret || v === `Bearer ${secret}`), JSON.stringify(sent)).toBe(true);
  });

  it('router logs -f: Ctrl-C ends it with exit 0 and the terminal back', async () => {
    const t = launch('logs', 'logs -f');
    await waitScreen(t, (x) => x.includes('router logs') && x.includes('● live'), 'the logs view');
    await chat('openai/gpt-4o-mini');
    await waitScreen(t, (x) => (x.match(/openai\/gpt-4o-mini/g) ?? []).length >= 3, 'the new request');
    expect(tmux('display-message', '-p', '-t', t, '#{alternate_on}').trim()).toBe('1');
    tmux('send-keys', '-t', t, 'C-c');
    const s = await waitScreen(t, (x) => x.includes('__EXIT__'), 'the exit');
    expect(s).toMatch(/^__EXIT__ 0$/m);
    expect(tmux('display-message', '-p', '-t', t, '#{alternate_on}').trim()).toBe('0');
  });

  it('a daemon restart under the dashboard and under logs -f: the new pid, and the request made before they reconnected', async () => {
    const d = launch('dash-restart', 'dashboard');
    const l = launch('logs-restart', 'logs -f');
    const oldPid = router.pid;
    await waitScreen(d, (x) => x.includes(`pid ${oldPid} `) && x.includes('● live'), 'the dashboard');
    await waitScreen(l, (x) => x.includes('router logs') && x.includes('● live'), 'the logs view');
    const { home, port } = router;
    await router.stop();
    await waitScreen(d, (x) => x.includes('reconnecting'), 'the dashboard noticing');
    // Long enough for the reconnect backoff to reach its 5 s step: the next attempt is seconds away.
    await new Promise((r) => setTimeout(r, 4_000));
    router = await startRouter({ home, port, keepHome: true });
    expect(router.pid).not.toBe(oldPid);
    await chat('openai/gpt-gap');
    // made while both are still reconnecting: only the backfill from /api/logs can show it
    expect(screen(d)).toContain('reconnecting');
    expect(screen(l)).toContain('reconnecting');
    let s = await waitScreen(d, (x) => x.includes(`pid ${router.pid} `) && /^\d\d:\d\d:\d\d 400 openai\/gpt-gap/m.test(x) && x.includes('● live'), 'the new pid and the gap request', 25_000);
    expect(s).not.toContain(`pid ${oldPid} `);
    s = await waitScreen(l, (x) => /\s400 openai\/gpt-gap\s/.test(x) && x.includes('● live'), 'the gap request in logs -f', 25_000);
    expect(s.match(/openai\/gpt-gap/g)).toHaveLength(1);
    for (const t of [d, l]) tmux('send-keys', '-t', t, 'q');
  });

  it('colour: errors red on a terminal; NO_COLOR turns every colour off', async () => {
    await chat('openai/gpt-fail');
    const coloured = launch('colour-on', 'dashboard');
    const plain = launch('colour-off', 'dashboard', 'NO_COLOR=1');
    for (const t of [coloured, plain]) await waitScreen(t, (x) => /^\d\d:\d\d:\d\d 400 openai\/gpt-fail/m.test(x) && x.includes('● live'), 'the error line');
    const withEscapes = (t: string) => tmux('capture-pane', '-p', '-e', '-t', t);
    const redLine = withEscapes(coloured).split('\n').find((l) => l.includes('400 openai/gpt-fail'))!;
    expect(redLine).toMatch(/\u001b\[(\d+;)*31m/);
    // no foreground colour at all (bold and inverse, which carry no colour, may stay)
    expect(withEscapes(plain)).not.toMatch(/\u001b\[(\d+;)*(3[0-7]|9[0-7]|38)[;m]/);
    for (const t of [coloured, plain]) tmux('send-keys', '-t', t, 'q');
  });
});
