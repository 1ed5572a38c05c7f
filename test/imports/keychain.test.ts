/**
 * Two-step keychain import against the real daemon: fake `security` / `secret-tool` programs on the
 * daemon's PATH and fake CLI credential files in a temp HOME. Discovery lists accounts with fingerprints
 * and no secret; import re-reads the store and imports only unchanged fingerprints; the imported
 * connection then serves a chat request against a mock upstream.
 */
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DiscoveredAccount, DiscoverReply, KeychainImportReply } from '../../src/shared/imports.js';
import { startMockUpstream, type MockUpstream } from '../mocks/upstream.js';
import { startRouter, type RouterProcess } from '../support/router-daemon.js';
import { claudeFile, codexFile, type FakeMachine, fakeMachine, manageAs } from './fixtures.js';

const KEYCHAIN_CLAUDE = 'sk-ant-oat01-from-keychain';
const FILE_CLAUDE = 'sk-ant-oat01-from-file';
const FILE_CODEX = 'codex-access-from-file';

let machine: FakeMachine;
let router: RouterProcess;
let mock: MockUpstream;
let manage: ReturnType<typeof manageAs>;

beforeAll(async () => {
  machine = fakeMachine();
  machine.writeFile('.claude/.credentials.json', claudeFile(FILE_CLAUDE));
  machine.writeFile('.codex/auth.json', codexFile(FILE_CODEX));
  machine.writeFile('.gemini/oauth_creds.json', { access_token: 'ya29.gemini', refresh_token: '1//gemini', expiry_date: Date.now() + 3_600_000 });
  machine.setItem('Claude Code-credentials', 'alice', claudeFile(KEYCHAIN_CLAUDE, 'sk-ant-ort01-keychain'));
  mock = await startMockUpstream({ requireKey: KEYCHAIN_CLAUDE });
  router = await startRouter({ env: machine.env({ ROUTER_KEYCHAIN_BACKEND: 'macos' }) });
  manage = manageAs(router, machine);
});

afterAll(async () => {
  await router?.stop();
  await mock?.close();
});

async function discover(): Promise<DiscoveredAccount[]> {
  const r = await manage<DiscoverReply>('POST', '/api/providers/keychain/discover');
  expect(r.status).toBe(200);
  return r.json.accounts;
}

const pick = (accounts: DiscoveredAccount[], service: string) => {
  const a = accounts.find((x) => x.service === service);
  if (!a) throw new Error(`${service} not discovered: ${JSON.stringify(accounts)}`);
  return { service: a.service, account: a.account, fingerprint: a.fingerprint };
};

describe('keychain discover', () => {
  it('lists the keychain item and the CLI credential files, with fingerprints and no secret', async () => {
    const r = await manage<DiscoverReply>('POST', '/api/providers/keychain/discover');
    expect(r.status).toBe(200);
    const byService = Object.fromEntries(r.json.accounts.map((a) => [a.service, a]));
    expect(byService['Claude Code-credentials']).toMatchObject({ account: 'alice', provider: 'claude-code', kind: 'keychain', importable: true });
    expect(byService['~/.claude/.credentials.json']).toMatchObject({ account: 'claude-max', provider: 'claude-code', kind: 'file', importable: true });
    expect(byService['~/.codex/auth.json']).toMatchObject({ account: 'dev@example.com', provider: 'codex', kind: 'file', importable: true });
    expect(byService['~/.gemini/oauth_creds.json']).toMatchObject({ provider: 'gemini-cli', kind: 'file' });
    for (const a of r.json.accounts) expect(a.fingerprint).toMatch(/^[A-Za-z0-9_-]{32}$/);
    const text = JSON.stringify(r.json);
    for (const secret of [KEYCHAIN_CLAUDE, FILE_CLAUDE, FILE_CODEX, 'sk-ant-ort01-keychain', 'rt-codex-file', 'ya29.gemini']) expect(text).not.toContain(secret);
    // The fake security was run with plain argv (no shell): attributes first, then the secret of that account.
    expect(machine.calls()).toEqual(
      expect.arrayContaining([
        'security find-generic-password -s Claude Code-credentials',
        'security find-generic-password -s Claude Code-credentials -a alice -w',
      ]),
    );
  });

  it('gives the same fingerprint while the tokens stay the same, and a different one when they change', async () => {
    const first = pick(await discover(), 'Claude Code-credentials');
    expect(pick(await discover(), 'Claude Code-credentials').fingerprint).toBe(first.fingerprint);
    machine.setItem('Claude Code-credentials', 'alice', claudeFile('sk-ant-oat01-rotated', 'sk-ant-ort01-keychain'));
    expect(pick(await discover(), 'Claude Code-credentials').fingerprint).not.toBe(first.fingerprint);
    machine.setItem('Claude Code-credentials', 'alice', claudeFile(KEYCHAIN_CLAUDE, 'sk-ant-ort01-keychain'));
  });
});

describe('keychain import', () => {
  it('imports nothing when the account changed between discover and import', async () => {
    const confirmed = pick(await discover(), 'Claude Code-credentials');
    machine.setItem('Claude Code-credentials', 'alice', claudeFile('sk-ant-oat01-changed-meanwhile', 'sk-ant-ort01-keychain'));
    try {
      const r = await manage<KeychainImportReply>('POST', '/api/providers/keychain/import', { confirmedAccounts: [confirmed] });
      expect(r.status).toBe(200);
      expect(r.json.imported).toEqual([]);
      expect(r.json.skipped).toEqual([{ service: confirmed.service, account: confirmed.account, reason: 'changed' }]);
      expect((await manage('GET', '/api/providers')).json.connections).toEqual([]);
    } finally {
      machine.setItem('Claude Code-credentials', 'alice', claudeFile(KEYCHAIN_CLAUDE, 'sk-ant-ort01-keychain'));
    }
  });

  it('refuses an import without confirmedAccounts (legacy single-step import is off by default)', async () => {
    const r = await manage('POST', '/api/providers/keychain/import', {});
    expect(r.status).toBe(400);
    expect(r.json.error.param).toBe('confirmedAccounts');
    const forged = await manage<KeychainImportReply>('POST', '/api/providers/keychain/import', {
      confirmedAccounts: [{ service: 'Claude Code-credentials', account: 'alice', fingerprint: 'A'.repeat(32) }, { service: 'nope', account: 'x', fingerprint: 'y' }],
    });
    expect(forged.json.imported).toEqual([]);
    expect(forged.json.skipped.map((s) => s.reason)).toEqual(['changed', 'not_found']);
  });

  it('imports confirmed accounts only, encrypted, and a second import refreshes instead of duplicating', async () => {
    const accounts = await discover();
    const confirmed = [pick(accounts, 'Claude Code-credentials'), pick(accounts, '~/.codex/auth.json')];
    const r = await manage<KeychainImportReply>('POST', '/api/providers/keychain/import', { confirmedAccounts: confirmed });
    expect(r.status).toBe(200);
    expect(r.json.skipped).toEqual([]);
    expect(r.json.imported.map((i) => [i.service, i.connection.provider, i.connection.created])).toEqual([
      ['Claude Code-credentials', 'claude-code', true],
      ['~/.codex/auth.json', 'codex', true],
    ]);
    const list = (await manage('GET', '/api/providers')).json.connections as Array<Record<string, any>>;
    expect(list).toHaveLength(2);
    const codex = list.find((c) => c.provider === 'codex')!;
    expect(codex.providerSpecificData).toMatchObject({ accountId: 'acct-123', email: 'dev@example.com', importedFrom: '~/.codex/auth.json:dev@example.com' });
    expect(JSON.stringify(list)).not.toContain(FILE_CODEX);
    expect(JSON.stringify(list)).not.toContain(KEYCHAIN_CLAUDE);
    // At rest too: the database files never hold the tokens in the clear.
    for (const file of ['router.db', 'router.db-wal']) {
      const bytes = existsSync(join(router.home, file)) ? readFileSync(join(router.home, file)) : Buffer.alloc(0);
      expect(bytes.includes(KEYCHAIN_CLAUDE), file).toBe(false);
      expect(bytes.includes(FILE_CODEX), file).toBe(false);
    }

    const again = await manage<KeychainImportReply>('POST', '/api/providers/keychain/import', { confirmedAccounts: confirmed.slice(0, 1) });
    expect(again.json.imported[0]!.connection).toMatchObject({ created: false, id: r.json.imported[0]!.connection.id });
    const after = (await manage('GET', '/api/providers')).json.connections as Array<Record<string, any>>;
    expect(after).toHaveLength(2);
    // The same tokens again (a second `router setup`) write nothing: the connection is as it was.
    expect(after.find((c) => c.id === r.json.imported[0]!.connection.id)!.updatedAt).toBe(list.find((c) => c.id === r.json.imported[0]!.connection.id)!.updatedAt);
  });

  it('the imported Claude Code connection serves a chat request with the keychain token', async () => {
    const id = (await manage('GET', '/api/providers')).json.connections.find((c: any) => c.provider === 'claude-code').id;
    const cur = (await manage('GET', `/api/providers/${id}`)).json;
    const put = await manage('PUT', `/api/providers/${id}`, { providerSpecificData: { ...cur.providerSpecificData, baseUrl: mock.anthropicBase } });
    expect(put.status).toBe(200);
    const key = (await manage('POST', '/api/keys', { name: 'chat', scopes: ['proxy'] })).json.key as string;
    const res = await fetch(`${router.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'claude-code/claude-sonnet-4-5', messages: [{ role: 'user', content: 'hi' }] }),
    });
    const body = await res.json();
    expect(res.status, JSON.stringify(body)).toBe(200);
    expect(body.choices[0].message.content).toBe('Hello from the mock.');
    const sent = mock.requests.at(-1)!;
    expect(sent.endpoint).toBe('anthropic.messages');
    expect(sent.headers.authorization).toBe(`Bearer ${KEYCHAIN_CLAUDE}`);
    expect(sent.headers['anthropic-beta']).toContain('oauth-2025-04-20');
  });
});

describe('legacy single-step import (opt-in)', () => {
  it('imports every importable account when keychainLegacyImport is on, marked deprecated', async () => {
    // Only accounts whose import needs no upstream call (a Gemini CLI login looks up its Code Assist project).
    rmSync(join(machine.home, '.gemini'), { recursive: true, force: true });
    expect((await manage('PATCH', '/api/settings', { keychainLegacyImport: true })).status).toBe(200);
    try {
      const r = await manage<KeychainImportReply>('POST', '/api/providers/keychain/import', {});
      expect(r.status).toBe(200);
      expect(r.json.deprecated).toMatch(/deprecated/);
      await expect.poll(() => readFileSync(join(router.home, 'router.log'), 'utf8')).toContain('deprecated: single-step keychain import');
      expect(r.json.imported.map((i) => i.service).sort()).toEqual(['Claude Code-credentials', '~/.claude/.credentials.json', '~/.codex/auth.json']);
    } finally {
      await manage('PATCH', '/api/settings', { keychainLegacyImport: false });
    }
  });
});

describe('Linux Secret Service backend', () => {
  it('discovers and imports an item read with secret-tool', async () => {
    const linux = fakeMachine();
    linux.setItem('Codex Auth', 'cli|0123456789abcdef', codexFile('codex-access-from-secret-service', 'linux@example.com'));
    const other = await startRouter({ env: linux.env({ ROUTER_KEYCHAIN_BACKEND: 'secret-service' }) });
    try {
      const otherManage = manageAs(other, linux);
      const found = (await otherManage<DiscoverReply>('POST', '/api/providers/keychain/discover')).json.accounts;
      expect(found).toEqual([expect.objectContaining({ service: 'Codex Auth', account: 'cli|0123456789abcdef', provider: 'codex', kind: 'keychain' })]);
      expect(linux.calls()).toContain('secret-tool search --all service Codex Auth');
      const r = await otherManage<KeychainImportReply>('POST', '/api/providers/keychain/import', { confirmedAccounts: [pick(found, 'Codex Auth')] });
      expect(r.json.imported).toHaveLength(1);
      expect(r.json.imported[0]!.connection.provider).toBe('codex');
    } finally {
      await other.stop();
    }
  });
});
