import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decryptSecret, encryptSecret, SecretError } from '../../src/daemon/store/secrets.js';
import { startRouter, type RouterProcess } from '../support/router-daemon.js';
import { expectErrorBody, expectNoSecrets } from './helpers.js';

// Provider catalog, connection CRUD with masked secrets, validation, and secrets at rest.

const SECRETS = {
  apiKey: 'sk-test-PLAINKEY-0123456789abcdef',
  accessToken: 'ya29.ACCESS-TOKEN-0123456789abcdef',
  refreshToken: '1//REFRESH-TOKEN-0123456789abcdef',
  cookie: 'session=COOKIE-VALUE-0123456789abcdef',
  apiKey2: 'sk-test-SECONDKEY-9876543210fedcba',
};
const ALL = Object.values(SECRETS);

const BUILTINS = ['openai', 'anthropic', 'gemini', 'openrouter', 'groq', 'deepseek', 'mistral', 'xai', 'together', 'fireworks', 'cerebras', 'ollama', 'lmstudio'];

let router: RouterProcess;

beforeAll(async () => {
  router = await startRouter();
});
afterAll(async () => {
  await router?.stop();
});

describe('GET /api/providers/catalog', () => {
  it('lists every built-in provider with its kind and auth kinds', async () => {
    const r = await router.manage('GET', '/api/providers/catalog');
    expect(r.status).toBe(200);
    const byId = new Map<string, any>(r.json.providers.map((p: any) => [p.id, p]));
    for (const id of BUILTINS) {
      const p = byId.get(id);
      expect(p, id).toBeDefined();
      expect(typeof p.kind).toBe('string');
      expect(Array.isArray(p.authKinds) && p.authKinds.length > 0, id).toBe(true);
    }
    expect(byId.get('openai')).toMatchObject({ kind: 'cloud', authKinds: ['api-key'], aliases: expect.arrayContaining(['oai']) });
    expect(byId.get('anthropic').aliases).toContain('claude');
    expect(byId.get('gemini').aliases).toContain('google');
    expect(byId.get('gemini').authKinds).toEqual(expect.arrayContaining(['api-key', 'oauth']));
    for (const id of ['ollama', 'lmstudio']) expect(byId.get(id)).toMatchObject({ kind: 'local', authKinds: ['none'] });
    expect(byId.get('web-session')).toMatchObject({ kind: 'web-session', authKinds: ['web-session'], supportsTools: false });
    // Ids are unique.
    expect(byId.size).toBe(r.json.providers.length);
  });

  it('shows a provider node after it is created, and not after it is removed', async () => {
    const n = await router.manage('POST', '/api/provider-nodes', {
      name: 'Catalog node',
      prefix: 'catnode',
      type: 'openai-compatible',
      baseUrl: 'http://127.0.0.1:9/v1',
    });
    expect(n.status).toBe(201);
    let cat = await router.manage('GET', '/api/providers/catalog');
    expect(cat.json.providers.find((p: any) => p.id === 'catnode')).toMatchObject({ kind: 'node', format: 'openai-chat' });
    expect((await router.manage('DELETE', `/api/provider-nodes/${n.json.id}`)).status).toBe(204);
    cat = await router.manage('GET', '/api/providers/catalog');
    expect(cat.json.providers.find((p: any) => p.id === 'catnode')).toBeUndefined();
  });
});

describe('connections CRUD', () => {
  const created: string[] = [];

  it('creates an api-key connection, masked everywhere', async () => {
    const r = await router.manage('POST', '/api/providers', { provider: 'openai', name: 'Work', apiKey: SECRETS.apiKey, priority: 5 });
    expect(r.status).toBe(201);
    expect(r.json).toMatchObject({ id: expect.any(String), provider: 'openai', name: 'Work', authKind: 'api-key', priority: 5, isActive: true });
    expect(typeof r.json.apiKey).toBe('string');
    expect(r.json.apiKey).not.toBe(SECRETS.apiKey);
    expectNoSecrets(r.json, ALL);
    created.push(r.json.id);

    const got = await router.manage('GET', `/api/providers/${r.json.id}`);
    expect(got.status).toBe(200);
    expect(got.json).toMatchObject({ id: r.json.id, provider: 'openai', name: 'Work' });
    expectNoSecrets(got.json, ALL);
  });

  it('creates OAuth connections with expiresAt as ISO and as epoch seconds', async () => {
    const iso = '2031-01-02T03:04:05.000Z';
    const a = await router.manage('POST', '/api/providers', {
      provider: 'gemini',
      accessToken: SECRETS.accessToken,
      refreshToken: SECRETS.refreshToken,
      expiresAt: iso,
    });
    expect(a.status, JSON.stringify(a.json)).toBe(201);
    expect(a.json).toMatchObject({ provider: 'gemini', authKind: 'oauth' });
    expect(new Date(a.json.expiresAt).toISOString()).toBe(iso);
    expectNoSecrets(a.json, ALL);
    created.push(a.json.id);

    const epoch = Math.floor(Date.parse(iso) / 1000);
    const b = await router.manage('POST', '/api/providers', {
      provider: 'codex',
      accessToken: SECRETS.accessToken,
      refreshToken: SECRETS.refreshToken,
      expiresAt: epoch,
    });
    expect(b.status, JSON.stringify(b.json)).toBe(201);
    expect(b.json).toMatchObject({ provider: 'codex', authKind: 'oauth' });
    expect(new Date(b.json.expiresAt).toISOString()).toBe(iso);
    expectNoSecrets(b.json, ALL);
    created.push(b.json.id);

    // Every form is stored as the same canonical UTC ISO string: offset timestamps and epoch milliseconds too.
    for (const form of ['2031-01-02T04:04:05+01:00', '2031-01-02T03:04:05Z', epoch * 1000, epoch]) {
      const r = await router.manage('POST', '/api/providers', { provider: 'gemini', accessToken: SECRETS.accessToken, expiresAt: form });
      expect(r.status, JSON.stringify(r.json)).toBe(201);
      expect(r.json.expiresAt, String(form)).toBe(iso);
      created.push(r.json.id);
    }
    const put = await router.manage('PUT', `/api/providers/${a.json.id}`, { expiresAt: '2031-01-02T05:04:05+02:00' });
    expect(put.json.expiresAt).toBe(iso);
    expect((await router.manage('PUT', `/api/providers/${a.json.id}`, { expiresAt: null })).json.expiresAt).toBeNull();
  });

  it('creates a web-session (cookie) connection and a no-auth local one', async () => {
    const w = await router.manage('POST', '/api/providers', {
      provider: 'web-session',
      cookie: SECRETS.cookie,
      providerSpecificData: { baseUrl: 'http://127.0.0.1:9/v1' },
    });
    expect(w.status, JSON.stringify(w.json)).toBe(201);
    expect(w.json).toMatchObject({ provider: 'web-session', authKind: 'web-session', providerSpecificData: { baseUrl: 'http://127.0.0.1:9/v1' } });
    expectNoSecrets(w.json, ALL);
    created.push(w.json.id);

    const l = await router.manage('POST', '/api/providers', { provider: 'ollama', providerSpecificData: { baseUrl: 'http://127.0.0.1:9/v1' } });
    expect(l.status, JSON.stringify(l.json)).toBe(201);
    expect(l.json).toMatchObject({ provider: 'ollama', authKind: 'none' });
    created.push(l.json.id);
  });

  it('accepts aliases, node ids and node prefixes as provider, storing the canonical id', async () => {
    for (const [alias, id] of [['oai', 'openai'], ['claude', 'anthropic'], ['google', 'gemini']] as const) {
      const r = await router.manage('POST', '/api/providers', { provider: alias, apiKey: SECRETS.apiKey2 });
      expect(r.status, alias).toBe(201);
      expect(r.json.provider).toBe(id);
      expectNoSecrets(r.json, ALL);
      created.push(r.json.id);
    }
    const node = await router.manage('POST', '/api/provider-nodes', {
      name: 'CRUD node',
      prefix: 'crudnode',
      type: 'openai-compatible',
      baseUrl: 'http://127.0.0.1:9/v1',
    });
    expect(node.status).toBe(201);
    const byId = await router.manage('POST', '/api/providers', { provider: node.json.id, apiKey: SECRETS.apiKey2 });
    expect(byId.status, JSON.stringify(byId.json)).toBe(201);
    // Stored under the node's id; read by its prefix (names, not ids, in what people read).
    expect(byId.json.providerId).toBe(node.json.id);
    expect(byId.json.provider).toBe('crudnode');
    const byPrefix = await router.manage('POST', '/api/providers', { provider: 'crudnode', apiKey: SECRETS.apiKey2 });
    expect(byPrefix.status, JSON.stringify(byPrefix.json)).toBe(201);
    expect(byPrefix.json.providerId).toBe(node.json.id);
    created.push(byId.json.id, byPrefix.json.id);
  });

  it('lists connections without any whole secret', async () => {
    const r = await router.manage('GET', '/api/providers');
    expect(r.status).toBe(200);
    const ids = r.json.connections.map((c: any) => c.id);
    for (const id of created) expect(ids).toContain(id);
    expectNoSecrets(r.json, ALL);
  });

  it('rejects bad bodies with 400 and the standard error body', async () => {
    const bad: Array<[string, Record<string, unknown>]> = [
      ['unknown provider', { provider: 'nope-provider', apiKey: SECRETS.apiKey }],
      ['missing credential', { provider: 'openai' }],
      ['missing credential (anthropic)', { provider: 'anthropic', name: 'x' }],
      ['wrong credential kind (cookie for openai)', { provider: 'openai', cookie: SECRETS.cookie }],
      ['wrong credential kind (token for anthropic)', { provider: 'anthropic', accessToken: SECRETS.accessToken }],
      ['wrong credential kind (key for web-session)', { provider: 'web-session', apiKey: SECRETS.apiKey }],
      ['bad baseUrl', { provider: 'openai', apiKey: SECRETS.apiKey, providerSpecificData: { baseUrl: 'not a url' } }],
      ['non-http baseUrl', { provider: 'openai', apiKey: SECRETS.apiKey, providerSpecificData: { baseUrl: 'file:///etc/passwd' } }],
      ['unknown field', { provider: 'openai', apiKey: SECRETS.apiKey, color: 'red' }],
      ['name 101 chars', { provider: 'openai', apiKey: SECRETS.apiKey, name: 'n'.repeat(101) }],
      ['priority -1', { provider: 'openai', apiKey: SECRETS.apiKey, priority: -1 }],
      ['priority too large', { provider: 'openai', apiKey: SECRETS.apiKey, priority: 1_000_001 }],
      ['priority not an integer', { provider: 'openai', apiKey: SECRETS.apiKey, priority: 1.5 }],
      ['empty apiKey', { provider: 'openai', apiKey: '' }],
      ['bad expiresAt', { provider: 'gemini', accessToken: SECRETS.accessToken, expiresAt: 'tomorrow' }],
      ['missing provider', { apiKey: SECRETS.apiKey }],
    ];
    const before = (await router.manage('GET', '/api/providers')).json.connections.length;
    for (const [label, body] of bad) {
      const r = await router.manage('POST', '/api/providers', body);
      expect(r.status, `${label}: ${JSON.stringify(r.json)}`).toBe(400);
      expectErrorBody(r, 400, 'invalid_request_error');
      expectNoSecrets(r.json, ALL);
    }
    // A 100-char name is fine.
    const ok = await router.manage('POST', '/api/providers', { provider: 'openai', apiKey: SECRETS.apiKey, name: 'n'.repeat(100) });
    expect(ok.status).toBe(201);
    created.push(ok.json.id);
    expect((await router.manage('GET', '/api/providers')).json.connections.length).toBe(before + 1);
  });

  it('answers 404 for an unknown id on get, put, delete, test, models and sync', async () => {
    const id = '00000000-0000-4000-8000-000000000000';
    for (const [method, path, body] of [
      ['GET', `/api/providers/${id}`, undefined],
      ['PUT', `/api/providers/${id}`, { name: 'x' }],
      ['DELETE', `/api/providers/${id}`, undefined],
      ['POST', `/api/providers/${id}/test`, undefined],
      ['GET', `/api/providers/${id}/models`, undefined],
      ['POST', `/api/providers/${id}/sync-models`, undefined],
    ] as const) {
      expectErrorBody(await router.manage(method, path, body), 404, 'not_found_error');
    }
  });

  it('PUT replaces the given secrets and keeps the others', async () => {
    const c = await router.manage('POST', '/api/providers', {
      provider: 'gemini',
      accessToken: SECRETS.accessToken,
      refreshToken: SECRETS.refreshToken,
    });
    expect(c.status).toBe(201);
    const newAccess = 'ya29.NEW-ACCESS-TOKEN-abcdefghijkl';
    const r = await router.manage('PUT', `/api/providers/${c.json.id}`, { accessToken: newAccess, name: 'Renamed', priority: 7 });
    expect(r.status, JSON.stringify(r.json)).toBe(200);
    expect(r.json).toMatchObject({ name: 'Renamed', priority: 7 });
    expectNoSecrets(r.json, [...ALL, newAccess]);
    // Masks show the new access token and the unchanged refresh token.
    expect(r.json.accessToken).not.toBe(c.json.accessToken);
    expect(r.json.refreshToken).toBe(c.json.refreshToken);
    expect(r.json.refreshToken).toBeTruthy();

    // The decrypted credential on disk is merged: new access token, old refresh token.
    const db = new Database(join(router.home, 'router.db'), { readonly: true, fileMustExist: true });
    try {
      const row = db.prepare('SELECT secrets_enc FROM provider_connections WHERE id = ?').get(c.json.id) as { secrets_enc: string };
      const cred = JSON.parse(decryptSecret(row.secrets_enc, join(router.home, 'secret.key'), `connection:${c.json.id}`));
      expect(cred).toMatchObject({ accessToken: newAccess, refreshToken: SECRETS.refreshToken });
    } finally {
      db.close();
    }

    // PUT validates like create.
    expectErrorBody(await router.manage('PUT', `/api/providers/${c.json.id}`, { name: 'n'.repeat(101) }), 400);
    expectErrorBody(await router.manage('PUT', `/api/providers/${c.json.id}`, { bogus: 1 }), 400);
    expectErrorBody(await router.manage('PUT', `/api/providers/${c.json.id}`, { priority: -5 }), 400);
    expectErrorBody(await router.manage('PUT', `/api/providers/${c.json.id}`, { providerSpecificData: { baseUrl: 'ftp://x' } }), 400);
    created.push(c.json.id);
  });

  it('PUT checks a new credential against the provider, like create, and updates the auth kind', async () => {
    const c = await router.addConnection({ provider: 'openai', apiKey: SECRETS.apiKey });
    expectErrorBody(await router.manage('PUT', `/api/providers/${c.id}`, { cookie: SECRETS.cookie }), 400);
    expectErrorBody(await router.manage('PUT', `/api/providers/${c.id}`, { accessToken: SECRETS.accessToken }), 400);
    expect((await router.manage('GET', `/api/providers/${c.id}`)).json.cookie).toBeUndefined();
    const g = await router.addConnection({ provider: 'gemini', apiKey: SECRETS.apiKey });
    const r = await router.manage('PUT', `/api/providers/${g.id}`, { accessToken: SECRETS.accessToken });
    expect(r.status, JSON.stringify(r.json)).toBe(200);
    expect(r.json.authKind).toBe('oauth');
    // Rotating the API key keeps the kind.
    const k = await router.manage('PUT', `/api/providers/${c.id}`, { apiKey: SECRETS.apiKey2, name: 'rotated' });
    expect(k.json).toMatchObject({ authKind: 'api-key', name: 'rotated' });
    expectNoSecrets(k.json, ALL);
    created.push(c.id, g.id);
  });

  it('DELETE answers 204, then 404', async () => {
    const c = await router.addConnection({ provider: 'groq', apiKey: SECRETS.apiKey });
    const d = await router.manage('DELETE', `/api/providers/${c.id}`);
    expect(d.status).toBe(204);
    expectErrorBody(await router.manage('GET', `/api/providers/${c.id}`), 404);
    expectErrorBody(await router.manage('DELETE', `/api/providers/${c.id}`), 404);
    const list = await router.manage('GET', '/api/providers');
    expect(list.json.connections.map((x: any) => x.id)).not.toContain(c.id);
  });
});

describe('secrets at rest', () => {
  it('never stores a plain credential in router.db or its WAL; secret.key is 0600; rows are v1.-encrypted', async () => {
    const plain = 'sk-AT-REST-UNIQUE-7f3a9c1e5b2d4086';
    const c = await router.addConnection({ provider: 'mistral', apiKey: plain });
    const dbFile = join(router.home, 'router.db');
    for (const file of [dbFile, `${dbFile}-wal`, `${dbFile}-journal`]) {
      if (!existsSync(file)) continue;
      const bytes = readFileSync(file);
      expect(bytes.includes(Buffer.from(plain)), `${file} holds the plain key`).toBe(false);
      for (const s of ALL) expect(bytes.includes(Buffer.from(s)), `${file} holds ${s.slice(0, 8)}`).toBe(false);
    }
    const keyFile = join(router.home, 'secret.key');
    expect(existsSync(keyFile)).toBe(true);
    expect(statSync(keyFile).mode & 0o777).toBe(0o600);

    const db = new Database(dbFile, { readonly: true, fileMustExist: true });
    let enc: string;
    let other: string;
    try {
      const rows = db.prepare('SELECT id, secrets_enc FROM provider_connections WHERE secrets_enc IS NOT NULL').all() as Array<{ id: string; secrets_enc: string }>;
      expect(rows.length).toBeGreaterThan(1);
      for (const r of rows) expect(r.secrets_enc.startsWith('v1.')).toBe(true);
      enc = rows.find((r) => r.id === c.id)!.secrets_enc;
      other = rows.find((r) => r.id !== c.id)!.id;
      // A no-auth connection stores no secret at all.
      const none = db.prepare("SELECT secrets_enc FROM provider_connections WHERE auth_kind = 'none'").all() as Array<{ secrets_enc: string | null }>;
      for (const r of none) expect(r.secrets_enc).toBeNull();
    } finally {
      db.close();
    }
    // Bound to its row: decrypts under its own id, not under another's.
    expect(JSON.parse(decryptSecret(enc, keyFile, `connection:${c.id}`))).toEqual({ apiKey: plain });
    expect(() => decryptSecret(enc, keyFile, `connection:${other}`)).toThrow(SecretError);
    expect(() => decryptSecret(enc, keyFile, '')).toThrow(SecretError);
    // Edited ciphertext fails too.
    const parts = enc.split('.');
    const ct = Buffer.from(parts[3]!, 'base64url');
    ct[0] ^= 1;
    expect(() => decryptSecret([...parts.slice(0, 3), ct.toString('base64url')].join('.'), keyFile, `connection:${c.id}`)).toThrow(SecretError);
    // Sanity of the helper itself: two encryptions of one value differ (fresh IV).
    expect(encryptSecret('x', keyFile, 'c')).not.toBe(encryptSecret('x', keyFile, 'c'));
  });

  it('a row whose ciphertext was copied to another id is not readable by the daemon either', async () => {
    // Management routes never show secrets, so this checks the store: decrypting a copied row must fail.
    const a = await router.addConnection({ provider: 'xai', apiKey: 'xai-COPY-SOURCE-0123456789' });
    const b = await router.addConnection({ provider: 'xai', apiKey: 'xai-COPY-TARGET-0123456789' });
    const db = new Database(join(router.home, 'router.db'), { readonly: true, fileMustExist: true });
    try {
      const enc = (db.prepare('SELECT secrets_enc FROM provider_connections WHERE id = ?').get(a.id) as { secrets_enc: string }).secrets_enc;
      expect(() => decryptSecret(enc, join(router.home, 'secret.key'), `connection:${b.id}`)).toThrow(/cannot be decrypted/);
    } finally {
      db.close();
    }
  });
});
