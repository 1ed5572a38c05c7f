/**
 * Path-scoped API keys (spec Authentication 1): a key with `path:<prefix>` scopes may call only routes
 * under those prefixes (403 elsewhere), alongside its model scopes; set through POST/PATCH /api/keys and
 * `router keys add --path`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startMockUpstream, type MockUpstream } from '../mocks/upstream.js';
import { runRouter } from '../support/cli.js';
import { addOpenAi, chat, startRouter, type RouterProcess } from './helpers.js';

let mock: MockUpstream;
let router: RouterProcess;

beforeAll(async () => {
  mock = await startMockUpstream();
  router = await startRouter();
  await addOpenAi(router, mock, 'sk-path-scope');
}, 30_000);

afterAll(async () => {
  await router?.stop();
  await mock?.close();
});

function embed(key: string) {
  return fetch(`${router.url}/v1/embeddings`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'openai/text-embedding-3-small', input: 'hello' }),
  });
}

describe('path-scoped keys', () => {
  it('a key scoped to /v1/embeddings embeds, and is refused with 403 on every other route', async () => {
    const created = await router.manage('POST', '/api/keys', { name: 'embed-only', scopes: ['path:/v1/embeddings'] });
    expect(created.status).toBe(201);
    // A path scope alone implies proxy, like a model scope.
    expect(created.json.scopes).toEqual(['proxy', 'path:/v1/embeddings']);
    const key = created.json.key as string;

    expect((await embed(key)).status).toBe(200);
    const refused = await chat(router, key, 'openai/gpt-4o-mini');
    expect(refused.status).toBe(403);
    expect((await refused.json()).error).toMatchObject({ code: 'path_not_allowed', message: expect.stringContaining('/v1/chat/completions') });
    const models = await fetch(`${router.url}/v1/models`, { headers: { authorization: `Bearer ${key}` } });
    expect(models.status).toBe(403);
    // A prefix is a path segment boundary: /v1/embeddingsX is not under /v1/embeddings.
    const near = await fetch(`${router.url}/v1/embeddingsX`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: '{}' });
    expect(near.status).not.toBe(200);

    // PATCH widens it: chat completions too; and model scopes still apply beside path scopes.
    const id = created.json.id as string;
    const patched = await router.manage('PATCH', `/api/keys/${id}`, { scopes: ['proxy', 'path:/v1/embeddings', 'path:/v1/chat/completions', 'model:openai/gpt-4o-mini'] });
    expect(patched.status).toBe(200);
    expect((await chat(router, key, 'openai/gpt-4o-mini')).status).toBe(200);
    expect((await chat(router, key, 'openai/gpt-4o')).status).toBe(403);
    const responses = await fetch(`${router.url}/v1/responses`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'openai/gpt-4o-mini', input: 'hi' }),
    });
    expect(responses.status).toBe(403);
  });

  it('a manage key with a path scope reaches only those management routes', async () => {
    const created = await router.manage('POST', '/api/keys', { name: 'usage-reader', scopes: ['manage', 'path:/api/usage'] });
    const key = created.json.key as string;
    const get = (path: string) => fetch(`${router.url}${path}`, { headers: { authorization: `Bearer ${key}` } });
    expect((await get('/api/usage/summary')).status).toBe(200);
    expect((await get('/api/keys')).status).toBe(403);
    expect((await get('/api/providers')).status).toBe(403);
  });

  it('a path-scoped manage key creates and changes keys only within its own scopes', async () => {
    const created = await router.manage('POST', '/api/keys', { name: 'key-admin', scopes: ['manage', 'path:/api/keys'] });
    const admin = created.json.key as string;
    const call = (method: string, path: string, body?: unknown) =>
      fetch(`${router.url}${path}`, { method, headers: { authorization: `Bearer ${admin}`, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) }).then(
        async (r) => ({ status: r.status, json: await r.json().catch(() => null) }),
      );
    // Each of these would be a way out of path:/api/keys.
    for (const scopes of [['manage'], ['proxy'], ['manage', 'path:/api'], ['manage', 'path:/api/keysX'], undefined]) {
      const r = await call('POST', '/api/keys', { name: 'escape', ...(scopes ? { scopes } : {}) });
      expect(r.status, JSON.stringify(scopes)).toBe(403);
      expect(r.json.error).toMatchObject({ code: 'scope_not_allowed', type: 'permission_error' });
    }
    // Within its scope: allowed, and the new key is as confined.
    const inner = await call('POST', '/api/keys', { name: 'inner', scopes: ['manage', 'path:/api/keys/'] });
    expect(inner.status, JSON.stringify(inner.json)).toBe(201);
    // It cannot widen a key (its own or another) nor touch a key broader than itself.
    expect((await call('PATCH', `/api/keys/${inner.json.id}`, { scopes: ['manage'] })).status).toBe(403);
    expect((await call('PATCH', `/api/keys/${created.json.id}`, { scopes: ['manage', 'proxy'] })).status).toBe(403);
    const owner = await router.manage('POST', '/api/keys', { name: 'owner-proxy', scopes: ['proxy'] });
    expect((await call('PATCH', `/api/keys/${owner.json.id}`, { isActive: false })).status).toBe(403);
    expect((await call('DELETE', `/api/keys/${owner.json.id}`)).status).toBe(403);
    expect((await call('PATCH', `/api/keys/${inner.json.id}`, { name: 'inner-renamed' })).status).toBe(200);
    const keys = (await router.manage('GET', '/api/keys')).json.keys as Array<{ name: string; scopes: string[]; isActive: boolean }>;
    expect(keys.filter((k) => k.name === 'escape')).toEqual([]);
    expect(keys.find((k) => k.name === 'owner-proxy')!.isActive).toBe(true);
    // An unconfined manage key (the owner's automation) still creates proxy keys.
    const open = (await router.manage('POST', '/api/keys', { name: 'automation', scopes: ['manage'] })).json.key as string;
    const minted = await fetch(`${router.url}/api/keys`, { method: 'POST', headers: { authorization: `Bearer ${open}`, 'content-type': 'application/json' }, body: JSON.stringify({ name: 'user-key' }) });
    expect(minted.status).toBe(201);
  });

  it('bad path scopes are refused with 400', async () => {
    for (const scope of ['path:v1/embeddings', 'path:/v1/<x>', 'path:/a b']) {
      const r = await router.manage('POST', '/api/keys', { name: 'bad', scopes: [scope] });
      expect(r.status, scope).toBe(400);
    }
  });

  it('router keys add --path creates a path-scoped key', async () => {
    const r = await runRouter(['keys', 'add', '--name', 'cli-embed', '--path', '/v1/embeddings', '--json', '--home', router.home, '--port', String(router.port)]);
    expect(r.exitCode, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout);
    expect(out.scopes).toEqual(['proxy', 'path:/v1/embeddings']);
    expect((await embed(out.key)).status).toBe(200);
    expect((await chat(router, out.key, 'openai/gpt-4o-mini')).status).toBe(403);
  });
});
