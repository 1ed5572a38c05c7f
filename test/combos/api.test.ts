/**
 * Combo management API in-process (bootServices + the real h3 app): validation at every edge, CRUD
 * statuses and bodies, 404s, 409s, and combos in the three model catalogs with their computed
 * context length.
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
let clientKey: string;

beforeAll(async () => {
  home = mkdtempSync(join(tmpdir(), 'router-combos-api-'));
  services = await bootServices({ home, host: '127.0.0.1', port: 0 });
  app = buildApp(services);
  clientKey = (await services.keys.create('client', ['proxy'])).key;
});

afterAll(() => {
  if (services) closeServices(services);
  if (home) rmSync(home, { recursive: true, force: true });
});

/** Each test starts with no combos (children first, so none is refused as referenced). */
beforeEach(async () => {
  for (let guard = 0; services.combos.list().length > 0 && guard < 100; guard++) {
    for (const c of services.combos.list()) if (services.combos.referrers(c.name).length === 0) await services.combos.remove(c.id);
  }
});

async function call(method: string, path: string, body?: unknown, headers: Record<string, string> = {}, remoteAddress = '127.0.0.1') {
  const res = await app.request(
    `http://router.test${path}`,
    {
      method,
      headers: {
        'x-router-cli-token': services.cliToken,
        ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
        ...headers,
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    },
    { remoteAddress },
  );
  const text = await res.text();
  return { status: res.status, json: text ? JSON.parse(text) : undefined };
}

const create = (body: unknown) => call('POST', '/api/combos', body);
/** Creates a combo and fails the test with the error body when it is refused. */
async function must(body: Record<string, unknown>) {
  const r = await create(body);
  expect(r.status, JSON.stringify(r.json)).toBe(201);
  return r.json;
}
const leaf = (name: string, extra: Record<string, unknown> = {}) => ({ name, models: ['openai/gpt-5'], ...extra });

describe('POST /api/combos validation', () => {
  it('name: 1..100 characters; 101 and empty are refused', async () => {
    const ok = 'n'.repeat(100);
    expect((await create(leaf(ok))).status).toBe(201);
    const long = await create(leaf('n'.repeat(101)));
    expect(long.status).toBe(400);
    expect(long.json.error).toMatchObject({ type: 'invalid_request_error', param: 'name' });
    expect(long.json.error.message).toMatch(/at most 100/);
    expect((await create(leaf(''))).status).toBe(400);
    expect((await create({ models: ['openai/gpt-5'] })).status).toBe(400);
    expect((await create(leaf(42 as unknown as string))).status).toBe(400);
  });

  it('name: letters, digits and . _ : - / only', async () => {
    expect((await create(leaf('Team.fast_v1:beta-2/eu'))).status).toBe(201);
    for (const bad of ['has space', 'semi;colon', 'ünïcode', 'star*', 'q?x', 'tab\tx', 'a@b', 'back\\slash']) {
      const r = await create(leaf(bad));
      expect(r.status, bad).toBe(400);
      expect(r.json.error.param, bad).toBe('name');
      expect(r.json.error.message, bad).toMatch(/may contain only/);
    }
  });

  it('name may not shadow <provider>/<model>: provider ids, aliases and node prefixes are refused as the first segment', async () => {
    for (const bad of ['openai/x', 'openai', 'anthropic/claude-sonnet-4-5', 'claude/fast', 'oai/x', 'google/gemini', 'ollama/llama']) {
      const r = await create(leaf(bad));
      expect(r.status, bad).toBe(400);
      expect(r.json.error).toMatchObject({ code: 'combo_name_shadows_provider', param: 'name' });
    }
    const node = await call('POST', '/api/provider-nodes', {
      name: 'My node',
      prefix: 'mynode',
      type: 'openai-compatible',
      baseUrl: 'http://127.0.0.1:9/v1',
    });
    expect(node.status, JSON.stringify(node.json)).toBe(201);
    const byPrefix = await create(leaf('mynode/fast'));
    expect(byPrefix.status).toBe(400);
    expect(byPrefix.json.error.message).toContain("provider 'mynode'");
    expect((await create(leaf(`${node.json.id}/x`))).status).toBe(400);
    // Only the first segment counts: a provider name later in the name is fine.
    expect((await create(leaf('team/openai'))).status).toBe(201);
    expect((await create(leaf('openai-ish/x'))).status).toBe(201);
    // A node's models are valid combo targets.
    expect((await create({ name: 'node-combo', models: ['mynode/some-model'] })).status).toBe(201);
    expect((await call('DELETE', `/api/provider-nodes/${node.json.id}`)).status).toBe(204);
  });

  it('a duplicate name is 409 combo_name_taken', async () => {
    await must(leaf('dup'));
    const r = await create(leaf('dup', { models: ['anthropic/claude-sonnet-4-5'] }));
    expect(r.status).toBe(409);
    expect(r.json.error).toMatchObject({ type: 'conflict_error', code: 'combo_name_taken', param: 'name' });
    expect(r.json.error.message).toContain("'dup'");
    // Names are case-sensitive, like model ids.
    expect((await create(leaf('DUP'))).status).toBe(201);
  });

  it('strategy: every CONTRACT strategy is accepted, priority is the default, anything else is 400', async () => {
    const strategies = ['priority', 'weighted', 'round-robin', 'random', 'least-used', 'cost-optimized', 'latency-optimized'];
    for (const s of strategies) expect((await create(leaf(`s-${s}`, { strategy: s }))).json.strategy).toBe(s);
    expect((await must(leaf('s-default'))).strategy).toBe('priority');
    for (const bad of ['fastest', 'Priority', '', 7, null]) {
      const r = await create(leaf(`bad-${String(bad)}`, { strategy: bad }));
      expect(r.status, String(bad)).toBe(400);
      expect(r.json.error.param).toBe('strategy');
    }
    expect((await create(leaf('bad-x', { strategy: 'fastest' }))).json.error.message).toMatch(/priority, weighted, round-robin/);
  });

  it('models: 1..50 entries; 0 and 51 are refused, 50 accepted', async () => {
    const many = (n: number) => Array.from({ length: n }, (_, i) => `openai/model-${i}`);
    const zero = await create({ name: 'zero', models: [] });
    expect(zero.status).toBe(400);
    expect(zero.json.error).toMatchObject({ param: 'models' });
    expect(zero.json.error.message).toMatch(/at least one/);
    const over = await create({ name: 'over', models: many(51) });
    expect(over.status).toBe(400);
    expect(over.json.error.message).toMatch(/at most 50/);
    expect((await create({ name: 'fifty', models: many(50) })).json.models).toHaveLength(50);
    expect((await create({ name: 'nomodels' })).status).toBe(400);
    expect((await create({ name: 'notarray', models: 'openai/gpt-5' })).status).toBe(400);
  });

  it('models: each must be <provider>/<model> with a known provider, or a combo name', async () => {
    const unknown = await create({ name: 'u', models: ['openai/gpt-5', 'nope/x'] });
    expect(unknown.status).toBe(400);
    expect(unknown.json.error).toMatchObject({ code: 'unknown_model', param: 'models.1' });
    expect(unknown.json.error.message).toContain("'nope' is not a known provider");
    const bare = await create({ name: 'u', models: ['no-such-combo'] });
    expect(bare.status).toBe(400);
    expect(bare.json.error.message).toMatch(/<provider>\/<model> or the name of an existing combo/);
    for (const bad of ['openai/', '/gpt-5', '', 'x'.repeat(513)]) expect((await create({ name: 'u', models: [bad] })).status, bad).toBe(400);
    // Aliases are valid providers; an unlisted model id of a known provider is accepted.
    const ok = await create({ name: 'aliases', models: ['claude/claude-sonnet-4-5', 'oai/brand-new-model', 'ollama/llama3.2'] });
    expect(ok.status).toBe(201);
    const twice = await create({ name: 'twice', models: ['openai/gpt-5', { model: 'openai/gpt-5', weight: 2 }] });
    expect(twice.status).toBe(400);
    expect(twice.json.error).toMatchObject({ param: 'models.1' });
    expect(twice.json.error.message).toMatch(/listed twice/);
  });

  it('models: entries normalize to objects; weights must be positive numbers (<= 1e6)', async () => {
    const r = await must({ name: 'w', strategy: 'weighted', models: ['openai/gpt-5', { model: 'anthropic/claude-sonnet-4-5', weight: 2.5 }, { model: 'gemini/gemini-2.5-pro' }] });
    expect(r.models).toEqual([{ model: 'openai/gpt-5' }, { model: 'anthropic/claude-sonnet-4-5', weight: 2.5 }, { model: 'gemini/gemini-2.5-pro' }]);
    for (const weight of [0, -1, '2', null, true, 1_000_001]) {
      const bad = await create({ name: 'wbad', strategy: 'weighted', models: [{ model: 'openai/gpt-5', weight }] });
      expect(bad.status, String(weight)).toBe(400);
      expect(bad.json.error.param, String(weight)).toMatch(/^models\.0/);
    }
    expect((await create({ name: 'wmax', models: [{ model: 'openai/gpt-5', weight: 1_000_000 }] })).status).toBe(201);
    // Extra keys and entries of other types are refused.
    expect((await create({ name: 'wx', models: [{ model: 'openai/gpt-5', priority: 1 }] })).status).toBe(400);
    expect((await create({ name: 'wx', models: [{ weight: 1 }] })).status).toBe(400);
    expect((await create({ name: 'wx', models: [42] })).status).toBe(400);
    // Weights are kept for other strategies too (read only by weighted), so switching strategy keeps them.
    expect((await must({ name: 'wprio', models: [{ model: 'openai/gpt-5', weight: 3 }] })).models).toEqual([{ model: 'openai/gpt-5', weight: 3 }]);
  });

  it('targetTimeoutMs: an integer 100..600000, or null / omitted', async () => {
    expect((await must(leaf('t-min', { targetTimeoutMs: 100 }))).targetTimeoutMs).toBe(100);
    expect((await must(leaf('t-max', { targetTimeoutMs: 600_000 }))).targetTimeoutMs).toBe(600_000);
    expect((await must(leaf('t-null', { targetTimeoutMs: null }))).targetTimeoutMs).toBeNull();
    expect((await must(leaf('t-none'))).targetTimeoutMs).toBeNull();
    for (const bad of [99, 600_001, 1500.5, '1000', -1, 0]) {
      const r = await create(leaf('t-bad', { targetTimeoutMs: bad }));
      expect(r.status, String(bad)).toBe(400);
      expect(r.json.error.param).toBe('targetTimeoutMs');
    }
  });

  it('hedgeAfterMs (50..600000 or null), midStreamRecovery (error, continue or null), contextFit (boolean): stored, off by default, PUT resets them', async () => {
    const on = await must(leaf('r-on', { hedgeAfterMs: 1500, midStreamRecovery: 'continue', contextFit: true }));
    expect(on).toMatchObject({ hedgeAfterMs: 1500, midStreamRecovery: 'continue', contextFit: true });
    expect((await must(leaf('r-err', { midStreamRecovery: 'error', hedgeAfterMs: null }))).midStreamRecovery).toBe('error');
    expect(await must(leaf('r-off'))).toMatchObject({ hedgeAfterMs: null, midStreamRecovery: null, contextFit: false });
    for (const [field, bad] of [['hedgeAfterMs', 49], ['hedgeAfterMs', 600_001], ['hedgeAfterMs', 10.5], ['hedgeAfterMs', '100'], ['midStreamRecovery', 'retry'], ['midStreamRecovery', 'off'], ['contextFit', 'yes'], ['contextFit', 1]] as const) {
      const r = await create(leaf('r-bad', { [field]: bad }));
      expect(r.status, `${field}=${bad}`).toBe(400);
      expect(r.json.error.param).toBe(field);
    }
    const put = await call('PUT', `/api/combos/${on.id}`, { name: 'r-on', models: ['openai/gpt-5'] });
    expect(put.json).toMatchObject({ hedgeAfterMs: null, midStreamRecovery: null, contextFit: false });
  });

  it('unknown body fields and non-JSON bodies are 400', async () => {
    expect((await create({ ...leaf('extra'), timeout: 5 })).status).toBe(400);
    expect((await create(['openai/gpt-5'])).status).toBe(400);
  });
});

describe('combos of combos', () => {
  it('a combo may reference another combo', async () => {
    await must(leaf('inner'));
    const outer = await must({ name: 'outer', models: ['inner', 'anthropic/claude-sonnet-4-5'] });
    expect(outer.models).toEqual([{ model: 'inner' }, { model: 'anthropic/claude-sonnet-4-5' }]);
  });

  it('a cycle A -> B -> A is refused with a 400 naming it; so is a self reference', async () => {
    const a = await must(leaf('A'));
    await must({ name: 'B', models: ['A'] });
    const r = await call('PUT', `/api/combos/${a.id}`, { name: 'A', models: ['B'] });
    expect(r.status).toBe(400);
    expect(r.json.error).toMatchObject({ code: 'combo_cycle', cycle: ['A', 'B', 'A'] });
    expect(r.json.error.message).toContain('A -> B -> A');
    expect((await call('GET', `/api/combos/${a.id}`)).json.models).toEqual([{ model: 'openai/gpt-5' }]);

    const self = await create({ name: 'self', models: ['openai/gpt-5', 'self'] });
    expect(self.status).toBe(400);
    expect(self.json.error.message).toContain('self -> self');
    const c = await must(leaf('C'));
    await must({ name: 'D', models: ['C'] });
    await must({ name: 'E', models: ['D'] });
    const long = await call('PUT', `/api/combos/${c.id}`, { name: 'C', models: ['openai/gpt-5', 'E'] });
    expect(long.status).toBe(400);
    expect(long.json.error.message).toContain('C -> E -> D -> C');
  });

  it('nesting: 4 levels accepted, 5 refused (on create and when an inner combo grows)', async () => {
    const l1 = await must(leaf('l1'));
    await must({ name: 'l2', models: ['l1'] });
    await must({ name: 'l3', models: ['l2'] });
    const l4 = await must({ name: 'l4', models: ['l3', 'openai/gpt-4.1'] });
    expect(l4.name).toBe('l4');
    const l5 = await create({ name: 'l5', models: ['l4'] });
    expect(l5.status).toBe(400);
    expect(l5.json.error).toMatchObject({ code: 'combo_too_deep', chain: ['l5', 'l4', 'l3', 'l2', 'l1'] });
    expect(l5.json.error.message).toMatch(/5 levels deep.*limit is 4/);
    // Making the innermost combo reference another combo would push l4 to depth 5.
    await must(leaf('extra'));
    const grow = await call('PUT', `/api/combos/${l1.id}`, { name: 'l1', models: ['extra'] });
    expect(grow.status).toBe(400);
    expect(grow.json.error.chain).toEqual(['l4', 'l3', 'l2', 'l1', 'extra']);
    // A shallow combo may still use l3 (depth 4 through it).
    expect((await create({ name: 'side', models: ['l3'] })).status).toBe(201);
  });
});

describe('CRUD', () => {
  it('POST returns 201 with the whole record; GET list and GET one return it', async () => {
    const r = await create({ name: 'crud', strategy: 'round-robin', models: ['openai/gpt-5', { model: 'anthropic/claude-sonnet-4-5', weight: 1 }], targetTimeoutMs: 30_000 });
    expect(r.status).toBe(201);
    expect(Object.keys(r.json).sort()).toEqual([
      'affinity', 'contextFit', 'createdAt', 'hedgeAfterMs', 'id', 'midStreamRecovery', 'models', 'name', 'strategy', 'targetTimeoutMs', 'updatedAt',
    ]);
    expect(r.json).toMatchObject({
      name: 'crud',
      strategy: 'round-robin',
      models: [{ model: 'openai/gpt-5' }, { model: 'anthropic/claude-sonnet-4-5', weight: 1 }],
      targetTimeoutMs: 30_000,
      affinity: 'off',
      hedgeAfterMs: null,
      midStreamRecovery: null,
      contextFit: false,
    });
    expect(r.json.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(Number.isNaN(Date.parse(r.json.createdAt))).toBe(false);
    await must(leaf('crud-2'));
    const list = await call('GET', '/api/combos');
    expect(list.status).toBe(200);
    expect(list.json.combos.map((c: { name: string }) => c.name)).toEqual(['crud', 'crud-2']);
    expect(list.json.combos[0]).toEqual(r.json);
    const one = await call('GET', `/api/combos/${r.json.id}`);
    expect(one).toEqual({ status: 200, json: r.json });
  });

  it('PUT replaces every field (omitted strategy and timeout reset to defaults) and may rename', async () => {
    const r = await must({ name: 'put-me', strategy: 'random', models: ['openai/gpt-5'], targetTimeoutMs: 1000 });
    await new Promise((res) => setTimeout(res, 5));
    const put = await call('PUT', `/api/combos/${r.id}`, { name: 'put-me-2', models: ['anthropic/claude-sonnet-4-5', 'openai/gpt-5'] });
    expect(put.status).toBe(200);
    expect(put.json).toMatchObject({ id: r.id, name: 'put-me-2', strategy: 'priority', targetTimeoutMs: null, createdAt: r.createdAt });
    expect(put.json.updatedAt > r.updatedAt).toBe(true);
    expect(put.json.models).toEqual([{ model: 'anthropic/claude-sonnet-4-5' }, { model: 'openai/gpt-5' }]);
    // Keeping its own name is not a conflict; taking another's is.
    expect((await call('PUT', `/api/combos/${r.id}`, { name: 'put-me-2', models: ['openai/gpt-5'] })).status).toBe(200);
    await must(leaf('other'));
    const taken = await call('PUT', `/api/combos/${r.id}`, { name: 'other', models: ['openai/gpt-5'] });
    expect(taken.status).toBe(409);
    // The same validation as create.
    expect((await call('PUT', `/api/combos/${r.id}`, { name: 'openai/x', models: ['openai/gpt-5'] })).status).toBe(400);
    expect((await call('PUT', `/api/combos/${r.id}`, { name: 'put-me-2', models: [] })).status).toBe(400);
    expect((await call('PUT', `/api/combos/${r.id}`, { models: ['openai/gpt-5'] })).status).toBe(400);
  });

  it('renaming a combo another combo references is 409 naming the referrer', async () => {
    const inner = await must(leaf('ren-inner'));
    await must({ name: 'ren-outer', models: ['ren-inner'] });
    const r = await call('PUT', `/api/combos/${inner.id}`, { name: 'ren-inner-2', models: ['openai/gpt-5'] });
    expect(r.status).toBe(409);
    expect(r.json.error).toMatchObject({ code: 'combo_in_use', referrers: ['ren-outer'] });
    expect(r.json.error.message).toContain("'ren-outer'");
    // Other changes to a referenced combo are fine.
    expect((await call('PUT', `/api/combos/${inner.id}`, { name: 'ren-inner', models: ['openai/gpt-4.1'] })).status).toBe(200);
  });

  it('DELETE is 204, then the combo is gone; deleting a referenced combo is 409 naming the referrers', async () => {
    const inner = await must(leaf('del-inner'));
    const o1 = await must({ name: 'del-o1', models: ['del-inner'] });
    await must({ name: 'del-o2', models: ['openai/gpt-4.1', 'del-inner'] });
    const refused = await call('DELETE', `/api/combos/${inner.id}`);
    expect(refused.status).toBe(409);
    expect(refused.json.error).toMatchObject({ type: 'conflict_error', code: 'combo_in_use', referrers: ['del-o1', 'del-o2'] });
    expect(refused.json.error.message).toMatch(/used by combos 'del-o1', 'del-o2'/);
    const del = await call('DELETE', `/api/combos/${o1.id}`);
    expect(del).toEqual({ status: 204, json: undefined });
    expect((await call('GET', `/api/combos/${o1.id}`)).status).toBe(404);
    expect((await call('DELETE', `/api/combos/${o1.id}`)).status).toBe(404);
    expect(services.combos.byName('del-o1')).toBeUndefined();
  });

  it('unknown and non-uuid ids are 404 on GET, PUT and DELETE', async () => {
    for (const id of ['00000000-0000-4000-8000-000000000000', 'not-a-uuid', '123']) {
      for (const method of ['GET', 'PUT', 'DELETE']) {
        const r = await call(method, `/api/combos/${id}`, method === 'PUT' ? leaf('x') : undefined);
        expect(r.status, `${method} ${id}`).toBe(404);
        expect(r.json.error).toMatchObject({ type: 'not_found_error', message: 'Combo not found.' });
      }
    }
  });

  it('needs management credentials', async () => {
    const anon = await app.request('http://router.test/api/combos', {}, { remoteAddress: '203.0.113.9' });
    expect(anon.status).toBe(401);
    const withClientKey = await call('GET', '/api/combos', undefined, { authorization: `Bearer ${clientKey}`, 'x-router-cli-token': '' }, '203.0.113.9');
    expect([401, 403]).toContain(withClientKey.status);
  });
});

describe('catalog', () => {
  const bearer = () => ({ authorization: `Bearer ${clientKey}` });

  it('GET /v1/models lists named combos (owned_by combo) with context_length from known targets only', async () => {
    await must({ name: 'cat-mixed', models: ['openai/gpt-5', 'anthropic/claude-sonnet-4-5', 'openai/not-a-listed-model'] });
    await must({ name: 'cat-unknown', models: ['openai/not-a-listed-model', 'ollama/whatever'] });
    await must({ name: 'cat-nested', models: ['gemini/gemini-2.5-pro', 'cat-mixed'] });
    await must({ name: 'cat-big', models: ['gemini/gemini-2.5-pro', 'openai/gpt-4.1'] });
    const r = await call('GET', '/v1/models', undefined, bearer());
    expect(r.status).toBe(200);
    const byId = new Map<string, Record<string, unknown>>(r.json.data.map((m: { id: string }) => [m.id, m]));
    expect(byId.get('cat-mixed')).toEqual({ id: 'cat-mixed', object: 'model', created: expect.any(Number), owned_by: 'combo', context_length: 200_000 });
    expect(byId.get('cat-unknown')).toEqual({ id: 'cat-unknown', object: 'model', created: expect.any(Number), owned_by: 'combo' });
    expect(byId.get('cat-nested')?.context_length).toBe(200_000);
    expect(byId.get('cat-big')?.context_length).toBe(1_047_576);
    expect(byId.get('cat-mixed')?.created).toBeGreaterThan(1_600_000_000);
    // Provider models are still listed (ollama is a no-auth provider, always in the catalog).
    expect([...byId.values()].some((m) => m.owned_by !== 'combo')).toBe(true);
  });

  it('the Anthropic-shape list and /v1beta/models list combos too', async () => {
    await must({ name: 'cat-a', models: ['anthropic/claude-sonnet-4-5', 'openai/gpt-5'] });
    await must({ name: 'cat-b', models: ['openai/nope-model'] });
    const anthropic = await call('GET', '/v1/models', undefined, { ...bearer(), 'anthropic-version': '2023-06-01' });
    expect(anthropic.status).toBe(200);
    const a = anthropic.json.data.find((m: { id: string }) => m.id === 'cat-a');
    expect(a).toEqual({ type: 'model', id: 'cat-a', display_name: 'cat-a', created_at: expect.any(String) });
    expect(anthropic.json.first_id).toBe(anthropic.json.data[0].id);

    const gemini = await call('GET', '/v1beta/models', undefined, bearer());
    expect(gemini.status).toBe(200);
    const ga = gemini.json.models.find((m: { name: string }) => m.name === 'models/cat-a');
    expect(ga).toMatchObject({ displayName: 'cat-a', inputTokenLimit: 200_000 });
    const gb = gemini.json.models.find((m: { name: string }) => m.name === 'models/cat-b');
    expect(gb).toBeDefined();
    expect(gb.inputTokenLimit).toBeUndefined();
  });

  it('a deleted combo leaves the catalog; an edit shows at once', async () => {
    const c = await must({ name: 'cat-live', models: ['openai/gpt-5'] });
    const ids = async () => (await call('GET', '/v1/models', undefined, bearer())).json.data.map((m: { id: string }) => m.id);
    expect(await ids()).toContain('cat-live');
    await call('PUT', `/api/combos/${c.id}`, { name: 'cat-live-2', models: ['openai/gpt-5'] });
    expect(await ids()).toContain('cat-live-2');
    expect(await ids()).not.toContain('cat-live');
    await call('DELETE', `/api/combos/${c.id}`);
    expect(await ids()).not.toContain('cat-live-2');
  });
});
