/**
 * Discovery honours the CLIs' own folder overrides (issue 18 item 4): `CODEX_HOME` (Codex keeps auth.json
 * there instead of ~/.codex) and `CLAUDE_CONFIG_DIR` (Claude Code keeps .credentials.json there instead of
 * ~/.claude, and on macOS names its Keychain item `Claude Code-credentials-<sha256(dir)[:8]>`). Real
 * daemon, fake credential files outside HOME, fake `security` on PATH.
 */
import { createHash } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DiscoverReply, KeychainImportReply } from '../../src/shared/imports.js';
import { startRouter, type RouterProcess } from '../support/router-daemon.js';
import { claudeFile, codexFile, type FakeMachine, fakeMachine, manageAs } from './fixtures.js';

let machine: FakeMachine;
let router: RouterProcess;
let manage: ReturnType<typeof manageAs>;
let codexHome: string;
let claudeDir: string;
/** Claude Code's per-folder Keychain item, computed here from its rule, not from router's code. */
let claudeItem: string;

beforeAll(async () => {
  machine = fakeMachine();
  codexHome = join(machine.home, '..', 'elsewhere', 'codex-work');
  claudeDir = join(machine.home, '..', 'elsewhere', 'claude-work');
  for (const d of [codexHome, claudeDir]) mkdirSync(d, { recursive: true });
  writeFileSync(join(codexHome, 'auth.json'), JSON.stringify(codexFile('codex-access-codex-home', 'work@example.com')));
  writeFileSync(join(claudeDir, '.credentials.json'), JSON.stringify(claudeFile('sk-ant-oat01-config-dir')));
  // The default locations hold other logins; they are still listed.
  machine.writeFile('.codex/auth.json', codexFile('codex-access-default', 'home@example.com'));
  claudeItem = `Claude Code-credentials-${createHash('sha256').update(claudeDir).digest('hex').slice(0, 8)}`;
  machine.setItem(claudeItem, 'alice', claudeFile('sk-ant-oat01-keychain-work', 'sk-ant-ort01-keychain-work'));
  router = await startRouter({ env: machine.env({ ROUTER_KEYCHAIN_BACKEND: 'macos', CODEX_HOME: codexHome, CLAUDE_CONFIG_DIR: claudeDir }) });
  manage = manageAs(router, machine);
});

afterAll(async () => {
  await router?.stop();
});

describe('CODEX_HOME and CLAUDE_CONFIG_DIR', () => {
  it('discovery lists the files in the overridden folders, the default ones, and the per-folder Keychain item', async () => {
    const r = await manage<DiscoverReply>('POST', '/api/providers/keychain/discover');
    expect(r.status).toBe(200);
    const by = Object.fromEntries(r.json.accounts.map((a) => [a.service, a]));
    expect(by['$CODEX_HOME/auth.json']).toMatchObject({ provider: 'codex', kind: 'file', account: 'work@example.com', importable: true });
    expect(by['$CLAUDE_CONFIG_DIR/.credentials.json']).toMatchObject({ provider: 'claude-code', kind: 'file', importable: true });
    expect(by['~/.codex/auth.json']).toMatchObject({ provider: 'codex', account: 'home@example.com' });
    expect(by[claudeItem]).toMatchObject({ provider: 'claude-code', kind: 'keychain', account: 'alice' });
    expect(machine.calls()).toContain(`security find-generic-password -s ${claudeItem} -a alice -w`);
    for (const a of r.json.accounts) expect(a.service).not.toContain(':');
    expect(JSON.stringify(r.json)).not.toContain('sk-ant-oat01-config-dir');
  });

  it('confirmed accounts from the overridden folders are imported with their own tokens', async () => {
    const found = (await manage<DiscoverReply>('POST', '/api/providers/keychain/discover')).json.accounts;
    const want = found
      .filter((a) => a.service === '$CODEX_HOME/auth.json' || a.service === '$CLAUDE_CONFIG_DIR/.credentials.json')
      .map(({ service, account, fingerprint }) => ({ service, account, fingerprint }));
    expect(want).toHaveLength(2);
    const r = await manage<KeychainImportReply>('POST', '/api/providers/keychain/import', { confirmedAccounts: want });
    expect(r.status).toBe(200);
    expect(r.json.skipped).toEqual([]);
    expect(r.json.imported.map((i) => i.service).sort()).toEqual(['$CLAUDE_CONFIG_DIR/.credentials.json', '$CODEX_HOME/auth.json']);
    const list = (await manage('GET', '/api/providers')).json.connections as Array<{ provider: string; providerSpecificData: Record<string, unknown> }>;
    const codex = list.find((c) => c.providerSpecificData.importedFrom === '$CODEX_HOME/auth.json:work@example.com');
    expect(codex?.provider).toBe('codex');
  });
});
