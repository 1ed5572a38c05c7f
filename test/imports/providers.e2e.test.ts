/**
 * Imports into the OAuth providers whose logins need more than tokens (Code Assist project, Copilot token
 * exchange, Qwen API base: made whole on first use, src/daemon/oauth/fresh.ts), against the real daemon with a fake HOME, the mock authorization server and
 * mock APIs: each imported connection then serves a chat request with the provider's own headers and
 * envelope. Also the Antigravity token-file routes' success paths (apply-local, zip-extract, bulk, single).
 */
import { strToU8, zipSync } from 'fflate';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { deriveCliToken } from '../../src/shared/cli-token.js';
import type { DiscoverReply, KeychainImportReply, TokenImportReply } from '../../src/shared/imports.js';
import { mockEndpoints, startOAuthMock, type OAuthMock } from '../mocks/oauth.js';
import { startMockUpstream, type MockUpstream } from '../mocks/upstream.js';
import { startRouter, type RouterProcess } from '../support/router-daemon.js';
import { type FakeMachine, fakeMachine, jwt, manageAs } from './fixtures.js';

let machine: FakeMachine;
let router: RouterProcess;
let oauth: OAuthMock;
let api: MockUpstream;
let manage: ReturnType<typeof manageAs>;
let key: string;

const agyFile = (access: string, extra: Record<string, unknown> = {}) => ({
  token: { access_token: access, token_type: 'Bearer', refresh_token: `1//${access}`, expiry: new Date(Date.now() + 3_600_000).toISOString() },
  auth_method: 'consumer',
  ...extra,
});

beforeAll(async () => {
  oauth = await startOAuthMock();
  api = await startMockUpstream();
  oauth.options.copilotApi = api.openaiBase;
  for (const t of ['ya29.gemini-file', 'ya29.agy-local', 'ya29.agy-single']) oauth.validAccess.add(t);
  machine = fakeMachine();
  machine.writeFile('.gemini/oauth_creds.json', {
    access_token: 'ya29.gemini-file', refresh_token: '1//gemini-file', scope: 'https://www.googleapis.com/auth/cloud-platform', token_type: 'Bearer',
    id_token: jwt({ email: 'g@example.com' }), expiry_date: Date.now() + 3_600_000,
  });
  machine.writeFile('.qwen/oauth_creds.json', { access_token: 'qwen-file-at', refresh_token: 'qwen-file-rt', token_type: 'Bearer', resource_url: api.openaiBase, expiry_date: Date.now() + 3_600_000 });
  machine.writeFile('.config/github-copilot/apps.json', { 'github.com:Iv1.b507a08c87ecfe98': { user: 'octo', oauth_token: 'gho_from_file', githubAppId: 'Iv1.b507a08c87ecfe98' } });
  machine.writeFile('.gemini/antigravity-cli/antigravity-oauth-token', agyFile('ya29.agy-local'));
  router = await startRouter({ env: machine.env({ ROUTER_KEYCHAIN_BACKEND: 'none' }) });
  manage = manageAs(router, machine);
  const endpoints = Object.fromEntries(['gemini-cli', 'antigravity', 'github-copilot', 'qwen-code'].map((p) => [p, mockEndpoints(oauth)]));
  expect((await manage('PATCH', '/api/settings', { oauthEndpoints: endpoints })).status).toBe(200);
  key = (await manage('POST', '/api/keys', { name: 'chat', scopes: ['proxy'] })).json.key;
});

afterAll(async () => {
  await router?.stop();
  await api?.close();
  await oauth?.close();
});

beforeEach(() => api.reset());

async function chat(model: string): Promise<{ status: number; text: string }> {
  const res = await fetch(`${router.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model, messages: [{ role: 'user', content: 'Hi' }] }),
  });
  return { status: res.status, text: await res.text() };
}

describe('discovered CLI logins of the OAuth providers', () => {
  it('imports Gemini CLI, Qwen Code and GitHub Copilot logins; each serves a chat request', async () => {
    const accounts = (await manage<DiscoverReply>('POST', '/api/providers/keychain/discover')).json.accounts;
    const byProvider = Object.fromEntries(accounts.map((a) => [a.provider, a]));
    for (const p of ['gemini-cli', 'qwen-code', 'github-copilot', 'antigravity']) expect(byProvider[p], p).toMatchObject({ importable: true, kind: 'file' });
    expect(byProvider['github-copilot']!.account).toBe('octo@github.com');
    const confirmed = ['gemini-cli', 'qwen-code', 'github-copilot'].map((p) => ({ service: byProvider[p]!.service, account: byProvider[p]!.account, fingerprint: byProvider[p]!.fingerprint }));
    const r = await manage<KeychainImportReply>('POST', '/api/providers/keychain/import', { confirmedAccounts: confirmed });
    expect(r.status, JSON.stringify(r.json)).toBe(200);
    expect(r.json.skipped).toEqual([]);
    expect(r.json.imported.map((i) => i.connection.provider)).toEqual(['gemini-cli', 'qwen-code', 'github-copilot']);

    const data = async (p: string) => ((await manage('GET', '/api/providers')).json.connections as Array<Record<string, any>>).find((c) => c.provider === p)!.providerSpecificData;
    expect(await data('gemini-cli')).toMatchObject({ email: 'g@example.com', importedFrom: '~/.gemini/oauth_creds.json:g@example.com' });
    expect((await data('qwen-code')).resourceUrl).toBe(api.openaiBase);
    expect(await data('github-copilot')).toMatchObject({ githubUser: 'octo', githubHost: 'github.com' });

    const gemini = await chat('gemini-cli/gemini-2.5-pro');
    expect(gemini.status, gemini.text).toBe(200);
    const sent = oauth.requests.filter((q) => q.path === '/v1internal:generateContent').at(-1)!;
    expect(sent.headers.authorization).toBe('Bearer ya29.gemini-file');
    expect(sent.fields).toMatchObject({ model: 'gemini-2.5-pro', project: 'proj-loaded' });
    // The imported login had no project: found on first use and kept.
    expect((await data('gemini-cli')).projectId).toBe('proj-loaded');

    const qwen = await chat('qwen-code/qwen3-coder-plus');
    expect(qwen.status, qwen.text).toBe(200);
    expect(api.requests.at(-1)!.headers.authorization).toBe('Bearer qwen-file-at');

    const copilot = await chat('github-copilot/gpt-4.1');
    expect(copilot.status, copilot.text).toBe(200);
    const exchange = oauth.requests.filter((q) => q.path === '/copilot_internal/v2/token').at(-1)!;
    expect(exchange.headers.authorization).toBe('token gho_from_file');
    expect(api.requests.at(-1)!.headers.authorization).toMatch(/^Bearer cop-\d+$/);
    expect(api.requests.at(-1)!.headers['copilot-integration-id']).toBe('vscode-chat');
  });
});

describe('Antigravity token files', () => {
  it('apply-local imports the agy CLI login (project discovered) and chats; again refreshes the same connection', async () => {
    const r = await manage<TokenImportReply>('POST', '/api/providers/agy-auth/apply-local');
    expect(r.status, JSON.stringify(r.json)).toBe(201);
    expect(r.json.imported).toEqual([expect.objectContaining({ provider: 'antigravity', created: true })]);
    const c = await chat('antigravity/gemini-2.5-pro');
    expect(c.status, c.text).toBe(200);
    const sent = oauth.requests.filter((q) => q.path === '/v1internal:generateContent').at(-1)!;
    expect(sent.headers.authorization).toBe('Bearer ya29.agy-local');
    expect(sent.fields).toMatchObject({ project: 'proj-loaded', userAgent: 'antigravity' });
    const again = await manage<TokenImportReply>('POST', '/api/providers/agy-auth/apply-local');
    expect(again.json.imported[0]).toMatchObject({ id: r.json.imported[0]!.id, created: false });
  });

  it('zip-extract imports every token file of an archive, ignores other files, and re-import refreshes', async () => {
    const before = oauth.requests.filter((q) => q.path === '/v1internal:loadCodeAssist').length;
    const archive = Buffer.from(
      zipSync({
        'accounts/a.json': strToU8(JSON.stringify({ type: 'antigravity', access_token: 'ya29.zip-a', refresh_token: '1//zip-a', email: 'a@example.com', project_id: 'proj-a', expired: '2030-01-01T00:00:00Z' })),
        'accounts/b.json': strToU8(JSON.stringify({ type: 'antigravity', access_token: 'ya29.zip-b', refresh_token: '1//zip-b', email: 'b@example.com', project_id: 'proj-b' })),
        'README.txt': strToU8('exported tokens'),
      }),
    );
    const upload = () =>
      fetch(`${router.url}/api/providers/agy-auth/zip-extract`, { method: 'POST', headers: { 'x-router-cli-token': cliToken(), 'content-type': 'application/zip' }, body: archive });
    const res = await upload();
    const body = (await res.json()) as TokenImportReply;
    expect(res.status, JSON.stringify(body)).toBe(201);
    expect(body.imported.map((c) => [c.name, c.created, c.expiresAt])).toEqual([
      ['Antigravity (Google login): a@example.com', true, '2030-01-01T00:00:00.000Z'],
      ['Antigravity (Google login): b@example.com', true, null],
    ]);
    expect(body.ignored).toEqual(['README.txt']);
    // The files named their projects: no discovery call was needed.
    expect(oauth.requests.filter((q) => q.path === '/v1internal:loadCodeAssist').length).toBe(before);
    const list = (await manage('GET', '/api/providers')).json.connections as Array<Record<string, any>>;
    expect(list.find((c) => c.name === 'Antigravity (Google login): b@example.com')!.providerSpecificData).toMatchObject({ projectId: 'proj-b', email: 'b@example.com' });
    const second = (await (await upload()).json()) as TokenImportReply;
    expect(second.imported.map((c) => c.created)).toEqual([false, false]);
    expect(second.imported.map((c) => c.id)).toEqual(body.imported.map((c) => c.id));
  });

  it('import (one file without an email) twice keeps one connection; import-bulk imports several', async () => {
    const one = await manage<TokenImportReply>('POST', '/api/providers/agy-auth/import', agyFile('ya29.agy-single'));
    expect(one.status, JSON.stringify(one.json)).toBe(201);
    const again = await manage<TokenImportReply>('POST', '/api/providers/agy-auth/import', agyFile('ya29.agy-single'));
    expect(again.json.imported[0]).toMatchObject({ id: one.json.imported[0]!.id, created: false });
    const count = (await manage('GET', '/api/providers')).json.connections.filter((c: any) => c.provider === 'antigravity').length;
    const bulk = await manage<TokenImportReply>('POST', '/api/providers/agy-auth/import-bulk', {
      files: [1, 2].map((n) => ({ access_token: `ya29.bulk-${n}`, refresh_token: `1//bulk-${n}`, email: `bulk${n}@example.com`, project_id: `proj-bulk-${n}` })),
    });
    expect(bulk.status).toBe(201);
    expect(bulk.json.imported.map((c) => c.created)).toEqual([true, true]);
    expect((await manage('GET', '/api/providers')).json.connections.filter((c: any) => c.provider === 'antigravity')).toHaveLength(count + 2);
  });
});

/** The CLI token this daemon accepts (derived with its HOME), for a raw upload. */
function cliToken(): string {
  const prev = process.env.HOME;
  process.env.HOME = machine.home;
  try {
    return deriveCliToken(`${router.home}/cli-token.salt`)!;
  } finally {
    process.env.HOME = prev;
  }
}
