/**
 * Playground presets in-process (bootServices + the real h3 app): validation at every edge, CRUD statuses
 * and bodies, newest-first listing, 404 for non-uuid and foreign ids, 401 without a key, and scoping to the
 * API key (or the dashboard session) that created them.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { bootServices, buildApp, closeServices } from '../../src/daemon/boot.js';
import type { Services } from '../../src/daemon/services.js';

let home: string;
let services: Services;
let app: ReturnType<typeof buildApp>;
let keyA: string;
let keyB: string;
let cookie: string;

beforeAll(async () => {
  home = mkdtempSync(join(tmpdir(), 'router-presets-'));
  services = await bootServices({ home, host: '127.0.0.1', port: 0 });
  app = buildApp(services);
  keyA = (await services.keys.create('a', ['proxy'])).key;
  keyB = (await services.keys.create('b', ['proxy'])).key;
  cookie = `auth_token=${(await services.sessions.create()).token}`;
});

afterAll(() => {
  if (services) closeServices(services);
  if (home) rmSync(home, { recursive: true, force: true });
});

beforeEach(() => {
  services.db.prepare('DELETE FROM playground_presets').run();
});

async function call(method: string, path: string, body?: unknown, headers: Record<string, string> = { authorization: `Bearer ${keyA}` }) {
  const res = await app.request(
    `http://router.test${path}`,
    {
      method,
      headers: { ...(body !== undefined ? { 'content-type': 'application/json' } : {}), ...headers },
      body: body === undefined ? undefined : JSON.stringify(body),
    },
    { remoteAddress: '127.0.0.1' },
  );
  const text = await res.text();
  return { status: res.status, json: text ? JSON.parse(text) : undefined };
}

const PRESETS = '/api/playground/presets';
const base = (extra: Record<string, unknown> = {}) => ({ name: 'p', model: 'openai/gpt-4o', ...extra });
const create = (body: unknown, headers?: Record<string, string>) => call('POST', PRESETS, body, headers);

/** Expects a 400 naming `param`. */
async function refused(body: unknown, param: string) {
  const r = await create(body);
  expect(r.status, JSON.stringify(r.json)).toBe(400);
  expect(r.json.error).toMatchObject({ type: 'invalid_request_error', param });
}

describe('preset validation', () => {
  it('name: 1..100 characters, required', async () => {
    expect((await create(base({ name: 'n'.repeat(100) }))).status).toBe(201);
    await refused(base({ name: 'n'.repeat(101) }), 'name');
    await refused(base({ name: '' }), 'name');
    await refused({ model: 'openai/gpt-4o' }, 'name');
    await refused(base({ name: 5 }), 'name');
  });

  it('model: a non-empty string, required', async () => {
    await refused({ name: 'x' }, 'model');
    await refused(base({ model: '' }), 'model');
  });

  it('system: up to 50,000 characters', async () => {
    expect((await create(base({ system: 's'.repeat(50_000) }))).status).toBe(201);
    await refused(base({ system: 's'.repeat(50_001) }), 'system');
  });

  it('messages: up to 200 of {role: system|user|assistant, content string}', async () => {
    const msgs = (n: number) => Array.from({ length: n }, (_, i) => ({ role: i % 2 ? 'assistant' : 'user', content: `m${i}` }));
    const ok = await create(base({ messages: [{ role: 'system', content: 'be brief' }, ...msgs(199)] }));
    expect(ok.status).toBe(201);
    expect(ok.json.messages).toHaveLength(200);
    await refused(base({ messages: msgs(201) }), 'messages');
    await refused(base({ messages: [{ role: 'tool', content: 'x' }] }), 'messages.0.role');
    await refused(base({ messages: [{ role: 'user' }] }), 'messages.0.content');
    await refused(base({ messages: [{ role: 'user', content: 7 }] }), 'messages.0.content');
    await refused(base({ messages: [{ role: 'user', content: 'x', name: 'extra' }] }), 'messages.0');
    await refused(base({ messages: 'hi' }), 'messages');
  });

  it('parameters: temperature 0..2, topP 0..1, maxTokens 1..1,000,000 (integer), stop up to 4 strings', async () => {
    const edges = { temperature: 2, topP: 1, maxTokens: 1_000_000, stop: ['a', 'b', 'c', 'd'] };
    const ok = await create(base({ parameters: edges }));
    expect(ok.status).toBe(201);
    expect(ok.json.parameters).toEqual(edges);
    expect((await create(base({ parameters: { temperature: 0, topP: 0, maxTokens: 1 } }))).status).toBe(201);
    await refused(base({ parameters: { temperature: 2.01 } }), 'parameters.temperature');
    await refused(base({ parameters: { temperature: -0.1 } }), 'parameters.temperature');
    await refused(base({ parameters: { topP: 1.01 } }), 'parameters.topP');
    await refused(base({ parameters: { topP: -1 } }), 'parameters.topP');
    await refused(base({ parameters: { maxTokens: 0 } }), 'parameters.maxTokens');
    await refused(base({ parameters: { maxTokens: 1_000_001 } }), 'parameters.maxTokens');
    await refused(base({ parameters: { maxTokens: 1.5 } }), 'parameters.maxTokens');
    await refused(base({ parameters: { stop: ['a', 'b', 'c', 'd', 'e'] } }), 'parameters.stop');
    await refused(base({ parameters: { stop: [1] } }), 'parameters.stop.0');
    await refused(base({ parameters: { seed: 1 } }), 'parameters');
  });

  it('tags: up to 20 strings of up to 50 characters', async () => {
    const tags = Array.from({ length: 20 }, (_, i) => `${i}`.padEnd(50, 't'));
    expect((await create(base({ tags }))).json.tags).toEqual(tags);
    await refused(base({ tags: [...tags, 'x'] }), 'tags');
    await refused(base({ tags: ['t'.repeat(51)] }), 'tags.0');
    await refused(base({ tags: [3] }), 'tags.0');
  });

  it('unknown properties are refused; id, createdAt and updatedAt are read-only and ignored', async () => {
    await refused(base({ temperature: 1 }), 'body');
    const r = await create(base({ id: 'not-mine', createdAt: '2000-01-01T00:00:00.000Z', updatedAt: 'x' }));
    expect(r.status).toBe(201);
    expect(r.json.id).not.toBe('not-mine');
    expect(r.json.createdAt).not.toBe('2000-01-01T00:00:00.000Z');
  });

  it('a body that is not JSON is a 400', async () => {
    const res = await app.request(`http://router.test${PRESETS}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${keyA}`, 'content-type': 'application/json' },
      body: '{nope',
    });
    expect(res.status).toBe(400);
  });
});

describe('preset CRUD', () => {
  it('create returns 201 with a uuid id, defaults and timestamps; GET reads it back', async () => {
    const r = await create(base({ name: 'Support bot', system: 'You help.', tags: ['support'] }));
    expect(r.status).toBe(201);
    expect(r.json).toEqual({
      id: expect.stringMatching(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/),
      name: 'Support bot',
      model: 'openai/gpt-4o',
      system: 'You help.',
      messages: [],
      parameters: {},
      tags: ['support'],
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
    });
    expect(new Date(r.json.createdAt).toISOString()).toBe(r.json.createdAt);
    expect(r.json.updatedAt).toBe(r.json.createdAt);
    const got = await call('GET', `${PRESETS}/${r.json.id}`);
    expect(got.status).toBe(200);
    expect(got.json).toEqual(r.json);
  });

  it('lists newest first', async () => {
    const ids: string[] = [];
    for (const name of ['one', 'two', 'three', 'four']) ids.push((await create(base({ name }))).json.id);
    const list = await call('GET', PRESETS);
    expect(list.status).toBe(200);
    expect(list.json.presets.map((p: { id: string }) => p.id)).toEqual(ids.reverse());
  });

  it('PUT replaces the preset (omitted fields reset), keeps id and createdAt, moves updatedAt; 400 on a bad body', async () => {
    const r = await create(base({ system: 'old', tags: ['a'], parameters: { temperature: 1 } }));
    await new Promise((res) => setTimeout(res, 5));
    const put = await call('PUT', `${PRESETS}/${r.json.id}`, { ...r.json, name: 'renamed', tags: undefined, parameters: { topP: 0.5 } });
    expect(put.status).toBe(200);
    expect(put.json).toMatchObject({ id: r.json.id, name: 'renamed', system: 'old', tags: [], parameters: { topP: 0.5 }, createdAt: r.json.createdAt });
    expect(put.json.updatedAt > r.json.updatedAt).toBe(true);
    expect((await call('GET', `${PRESETS}/${r.json.id}`)).json).toEqual(put.json);
    const bad = await call('PUT', `${PRESETS}/${r.json.id}`, base({ system: 's'.repeat(50_001) }));
    expect(bad.status).toBe(400);
    expect(bad.json.error.param).toBe('system');
    // Listing order is by creation: an update does not move a preset to the top.
    const newer = await create(base({ name: 'newer' }));
    await call('PUT', `${PRESETS}/${r.json.id}`, base({ name: 'touched' }));
    expect((await call('GET', PRESETS)).json.presets.map((p: { id: string }) => p.id)).toEqual([newer.json.id, r.json.id]);
  });

  it('DELETE returns 204, then the preset is a 404', async () => {
    const r = await create(base());
    const del = await app.request(`http://router.test${PRESETS}/${r.json.id}`, { method: 'DELETE', headers: { authorization: `Bearer ${keyA}` } });
    expect(del.status).toBe(204);
    expect(await del.text()).toBe('');
    expect((await call('GET', `${PRESETS}/${r.json.id}`)).status).toBe(404);
    expect((await call('DELETE', `${PRESETS}/${r.json.id}`)).status).toBe(404);
    expect((await call('PUT', `${PRESETS}/${r.json.id}`, base())).status).toBe(404);
  });

  it('a non-uuid or unknown id is a 404 with the standard body', async () => {
    for (const id of ['not-a-uuid', '123', 'ffffffff-ffff-ffff-ffff-fffffffffffff', '00000000-0000-4000-8000-000000000000']) {
      for (const [method, body] of [['GET'], ['PUT', base()], ['DELETE']] as const) {
        const r = await call(method, `${PRESETS}/${id}`, body);
        expect(r.status, `${method} ${id}`).toBe(404);
        expect(r.json.error).toMatchObject({ message: 'Preset not found.', type: 'not_found_error', code: 'not_found' });
      }
    }
  });
});

describe('preset auth and ownership', () => {
  it('every route is a 401 without a key, or with an unknown key', async () => {
    const r = await create(base());
    for (const headers of [{}, { authorization: 'Bearer sk-not-a-key' }]) {
      for (const [method, path, body] of [
        ['GET', PRESETS],
        ['POST', PRESETS, base()],
        ['GET', `${PRESETS}/${r.json.id}`],
        ['PUT', `${PRESETS}/${r.json.id}`, base()],
        ['DELETE', `${PRESETS}/${r.json.id}`],
        ['POST', '/api/playground/improve-prompt', { model: 'openai/gpt-4o', prompt: 'x' }],
      ] as const) {
        const res = await call(method, path, body, headers as Record<string, string> | undefined);
        expect(res.status, `${method} ${path}`).toBe(401);
        expect(res.json.error.type).toBe('authentication_error');
      }
    }
  });

  it('a key without the proxy scope is refused (403)', async () => {
    const manageOnly = (await services.keys.create('m', ['manage'])).key;
    expect((await call('GET', PRESETS, undefined, { authorization: `Bearer ${manageOnly}` })).status).toBe(403);
  });

  it("a key sees only its own presets; another key's preset is a 404", async () => {
    const a = await create(base({ name: 'of A' }));
    const asB = { authorization: `Bearer ${keyB}` };
    const b = await create(base({ name: 'of B' }), asB);
    expect((await call('GET', PRESETS)).json.presets.map((p: { name: string }) => p.name)).toEqual(['of A']);
    expect((await call('GET', PRESETS, undefined, asB)).json.presets.map((p: { name: string }) => p.name)).toEqual(['of B']);
    expect((await call('GET', `${PRESETS}/${a.json.id}`, undefined, asB)).status).toBe(404);
    expect((await call('PUT', `${PRESETS}/${a.json.id}`, base({ name: 'stolen' }), asB)).status).toBe(404);
    expect((await call('DELETE', `${PRESETS}/${a.json.id}`, undefined, asB)).status).toBe(404);
    expect((await call('GET', `${PRESETS}/${a.json.id}`)).json.name).toBe('of A');
    expect((await call('GET', `${PRESETS}/${b.json.id}`, undefined, asB)).json.name).toBe('of B');
  });

  it('dashboard sessions share one dashboard-owned set, separate from every key', async () => {
    const asSession = { cookie };
    await create(base({ name: 'of A' }));
    const d = await create(base({ name: 'dashboard' }), asSession);
    expect(d.status).toBe(201);
    expect((await call('GET', PRESETS, undefined, asSession)).json.presets.map((p: { name: string }) => p.name)).toEqual(['dashboard']);
    expect((await call('GET', `${PRESETS}/${d.json.id}`)).status).toBe(404);
  });

  it("deleting a key deletes its presets", async () => {
    const temp = await services.keys.create('temp', ['proxy']);
    await create(base(), { authorization: `Bearer ${temp.key}` });
    const count = () => (services.db.prepare('SELECT COUNT(*) AS n FROM playground_presets').get() as { n: number }).n;
    expect(count()).toBe(1);
    await services.keys.remove(temp.id);
    expect(count()).toBe(0);
  });
});
