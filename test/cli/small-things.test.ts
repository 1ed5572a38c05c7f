/**
 * Issue 15 item 8: small things a user sees. One timestamp format across tables; the web-session catalog
 * entry has no fake base URL; completion completes values (strategies, provider ids, combo and key
 * names, asked of the running daemon); the password command does not speak of a web dashboard.
 * (`logs -f` piped printing `9 -> 4 tok` and the diff header without a double slash are checked in
 * commands.test.ts and config-tool.test.ts.)
 */
import { spawnSync } from 'node:child_process';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startMockUpstream, type MockUpstream } from '../mocks/upstream.js';
import { BIN } from '../support/cli.js';
import { startRouter, type RouterProcess } from '../support/router-daemon.js';
import { isolateCliConfig, json, run, show } from './helpers.js';

let router: RouterProcess;
let mock: MockUpstream;
let configDir: string;

beforeAll(async () => {
  configDir = isolateCliConfig();
  [router, mock] = await Promise.all([startRouter(), startMockUpstream()]);
}, 60_000);

afterAll(async () => {
  await Promise.all([router?.stop(), mock?.close()]);
  rmSync(configDir, { recursive: true, force: true });
});

const R = (...args: string[]) => run([...args, '--home', router.home]);
async function ok(...args: string[]) {
  const r = await R(...args);
  expect(r.exitCode, show(r)).toBe(0);
  return r;
}

const STAMP = /\d{4}-\d\d-\d\d \d\d:\d\d:\d\d/;
const ISO = /\d{4}-\d\d-\d\dT\d\d:\d\d/;

describe('small things a user sees', () => {
  it('one timestamp format (YYYY-MM-DD HH:MM:SS, UTC) in every table and record view', async () => {
    const key = await router.createKey(['proxy']);
    await ok('providers', 'add', 'openai', '--api-key', 'sk-small-0123456789', '--base-url', mock.openaiBase);
    const res = await fetch(`${router.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'Hi' }] }),
    });
    await res.text();
    await ok('providers', 'nodes', 'add', '--name', 'box', '--prefix', 'box', '--type', 'openai-compatible', '--base-url', mock.openaiBase);
    await ok('combos', 'add', 'quick', '--model', 'openai/gpt-4o-mini');
    const outputs = [
      (await ok('keys', 'list')).stdout,
      (await ok('providers', 'nodes', 'list')).stdout,
      (await ok('combos', 'show', 'quick')).stdout,
      (await ok('webhooks', 'list')).stdout,
      (await ok('logs')).stdout,
    ];
    for (const o of outputs) expect(o).not.toMatch(ISO);
    for (const o of outputs.slice(0, 3)) expect(o).toMatch(STAMP);
    expect(outputs[0]).toMatch(/LAST USED \(UTC\)/);
    expect(outputs[1]).toMatch(/CREATED \(UTC\)/);
    expect(outputs[2]).toMatch(/^created: +\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC$/m);
  });

  it('the web-session catalog entry shows no fake base URL', async () => {
    const list = json<Array<{ id: string; baseUrl: string | null }>>(await ok('providers', 'catalog', '--json'));
    expect(list.find((p) => p.id === 'web-session')?.baseUrl).toBeNull();
    const human = (await ok('providers', 'catalog', '--kind', 'web-session')).stdout;
    expect(human).not.toContain('127.0.0.1:1/');
    expect(human).toMatch(/^web-session .*\(set per connection: --base-url\)$/m);
  });

  it('completion completes values: strategies, provider ids, combo and key names (bash)', async () => {
    await ok('keys', 'add', '--name', 'laptop');
    await ok('combos', 'add', 'cheap', '--model', 'openai/gpt-4o-mini');
    const r = await run(['completion', 'bash']);
    const file = join(configDir, 'router.bash');
    writeFileSync(file, r.stdout);
    const complete = (words: string[]) => {
      const script = [
        `source ${file}`,
        // the installed `router` is this build
        `router() { ROUTER_CLI_CONFIG_DIR=${configDir} ${process.execPath} ${BIN} "$@"; }`,
        `COMP_WORDS=(${words.map((w) => `'${w}'`).join(' ')}); COMP_CWORD=${words.length - 1}; _router`,
        `printf '%s\\n' "\${COMPREPLY[@]}"`,
      ].join('; ');
      const p = spawnSync('bash', ['-c', script], { encoding: 'utf8' });
      expect(p.status, p.stderr).toBe(0);
      return p.stdout.trim().split('\n');
    };
    const home = ['--home', router.home];
    expect(complete(['router', 'combos', 'add', 'x', '--strategy', ''])).toEqual([
      'priority',
      'weighted',
      'round-robin',
      'random',
      'least-used',
      'cost-optimized',
      'latency-optimized',
    ]);
    expect(complete(['router', ...home, 'keys', 'rm', 'lap'])).toEqual(['laptop']);
    expect(complete(['router', ...home, 'combos', 'rm', 'ch'])).toEqual(['cheap']);
    expect(complete(['router', ...home, 'providers', 'add', 'anth'])).toEqual(['anthropic']);
    expect(complete(['router', ...home, 'models', '--provider', 'ope'])).toEqual(expect.arrayContaining(['openai']));
    // the hidden helper is not offered as a command
    expect(complete(['router', '__'])).toEqual(['']);
  });

  it('the password command speaks of the login of the management API, not of a web dashboard', async () => {
    for (const args of [['password', '--help'], ['password', 'set', '--help']]) {
      const r = await R(...args);
      expect(r.stdout).not.toMatch(/dashboard/i);
    }
    expect((await R('password', '--help')).stdout).toMatch(/POST \/api\/auth\/login/);
  });

  it('webhooks add --help names every event the daemon emits (batch and connection events included)', async () => {
    const help = (await R('webhooks', 'add', '--help')).stdout.replace(/\s+/g, ' ');
    for (const name of ['request.completed', 'combo.switched', 'batch.completed', 'batch.failed', 'batch.cancelled', 'connection.refreshed', 'connection.expired']) {
      expect(help).toContain(name);
    }
  });
});
