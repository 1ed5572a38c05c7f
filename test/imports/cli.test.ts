/**
 * `router import` against the real daemon (fake `security` on its PATH, fake credential files in its
 * HOME), the CLI run in-process. The CLI token is derived from the home folder, so the CLI runs with the
 * daemon's HOME, as a user on that machine would.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { strToU8, zipSync } from 'fflate';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseSelector } from '../../src/cli/commands/import.js';
import { isolateCliConfig, json, run, show } from '../cli/helpers.js';
import { startRouter, type RouterProcess } from '../support/router-daemon.js';
import { claudeFile, codexFile, type FakeMachine, fakeMachine } from './fixtures.js';

let machine: FakeMachine;
let router: RouterProcess;
const savedHome = process.env.HOME;
let target: string[];

beforeAll(async () => {
  isolateCliConfig();
  machine = fakeMachine();
  machine.writeFile('.codex/auth.json', codexFile('codex-at-cli'));
  machine.setItem('Claude Code-credentials', 'alice', claudeFile('sk-ant-oat01-cli'));
  router = await startRouter({ env: machine.env({ ROUTER_KEYCHAIN_BACKEND: 'macos' }) });
  process.env.HOME = machine.home;
  target = ['--home', router.home, '--port', String(router.port)];
});

afterAll(async () => {
  process.env.HOME = savedHome;
  await router?.stop();
});

const connections = async () => (await run(['providers', 'list', '--json', ...target])).stdout;

describe('router import', () => {
  it('--discover prints the accounts as a table (and JSON), never a token', async () => {
    const r = await run(['import', '--discover', ...target]);
    expect(r.exitCode, show(r)).toBe(0);
    expect(r.stdout).toMatch(/^ACCOUNT\s+PROVIDER\s+FROM\s+EXPIRES\s+FINGERPRINT/);
    expect(r.stdout).toMatch(/Claude Code-credentials:alice\s+claude-code\s+keychain/);
    expect(r.stdout).toMatch(/~\/\.codex\/auth\.json:dev@example\.com\s+codex\s+file/);
    expect(r.stdout).not.toContain('sk-ant-oat01-cli');
    const j = json(await run(['import', '--discover', '--json', ...target]));
    expect(j.accounts).toHaveLength(2);
  });

  it('--confirm service:account imports it; a stale =FINGERPRINT is skipped with exit 1', async () => {
    const r = await run(['import', '--confirm', 'Claude Code-credentials:alice', ...target]);
    expect(r.exitCode, show(r)).toBe(0);
    expect(r.stdout).toMatch(/^imported Claude Code-credentials:alice -> claude-code connection 'Claude Code \(Claude login\): claude-max'/);
    const stale = await run(['import', '--confirm', '~/.codex/auth.json:dev@example.com=AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA', ...target]);
    expect(stale.exitCode, show(stale)).toBe(1);
    expect(stale.stdout).toContain('skipped ~/.codex/auth.json:dev@example.com: its tokens changed since discovery');
    expect(await connections()).not.toContain('codex');
    const missing = await run(['import', '--confirm', 'nope:nobody', ...target]);
    expect(missing.exitCode).toBe(1);
    expect(missing.stderr).toContain('nope:nobody was not found');
  });

  it('without flags: a numbered list to pick from in a terminal; usage error without one', async () => {
    const r = await run(['import', ...target], { interactive: true, answers: ['1'] });
    expect(r.exitCode, show(r)).toBe(0);
    expect(r.stdout).toMatch(/^#\s+ACCOUNT/);
    expect(r.stdout).toContain('Import which?');
    expect(r.stdout).toMatch(/imported ~\/\.codex\/auth\.json:dev@example\.com -> codex connection/);
    expect(await connections()).toContain('codex');
    const cancelled = await run(['import', ...target], { interactive: true, answers: [''] });
    expect(cancelled.stdout).toMatch(/nothing imported\n$/);
    const noTty = await run(['import', ...target]);
    expect(noTty.exitCode).toBe(2);
    expect(noTty.stderr).toContain('--discover, --confirm');
  });

  it('--file uploads an archive as is; the daemon refuses an unsafe one', async () => {
    const file = join(machine.home, 'tokens.zip');
    writeFileSync(file, zipSync({ '../evil.json': strToU8('{}') }));
    const r = await run(['import', '--file', file, ...target]);
    expect(r.exitCode).toBe(2); // a refused validation (400) exits 2
    expect(r.stderr).toContain('".." is not allowed');
    const notJson = join(machine.home, 'token.json');
    writeFileSync(notJson, 'not json');
    const bad = await run(['import', '--file', notJson, ...target]);
    expect(bad.exitCode).toBe(2);
    expect(bad.stderr).toContain('is not a JSON token file');
  });

  it('service:account selectors split at the first colon and take an optional =fingerprint', () => {
    expect(parseSelector('github-copilot:octo@github.com:Iv1')).toEqual({ service: 'github-copilot', account: 'octo@github.com:Iv1' });
    expect(parseSelector('Codex Auth:cli|abc=FP_1')).toEqual({ service: 'Codex Auth', account: 'cli|abc', fingerprint: 'FP_1' });
    expect(() => parseSelector('nocolon')).toThrow(/service:account/);
  });
});
