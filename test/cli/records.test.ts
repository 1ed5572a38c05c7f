/**
 * Issue 15 items 3 and 4: inputs that name nothing fail with "no such ...", and API keys are handled like
 * every other record (by name or id, disable/enable, limits, names in usage, model scopes that work).
 * In-process CLI runs against one real daemon with a mock upstream behind it.
 */
import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startMockUpstream, type MockUpstream } from '../mocks/upstream.js';
import { startRouter, type RouterProcess } from '../support/router-daemon.js';
import { isolateCliConfig, json, run, show } from './helpers.js';

let router: RouterProcess;
let mock: MockUpstream;
let configDir: string;

beforeAll(async () => {
  configDir = isolateCliConfig();
  [router, mock] = await Promise.all([startRouter(), startMockUpstream()]);
  await router.addConnection({ provider: 'openai', apiKey: 'sk-test-0123456789', providerSpecificData: { baseUrl: mock.openaiBase } });
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

async function chat(key: string, model = 'openai/gpt-4o-mini') {
  const res = await fetch(`${router.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model, messages: [{ role: 'user', content: 'Hi' }] }),
  });
  await res.text();
  return res.status;
}

describe('inputs that name nothing fail', () => {
  it('every verb on a missing record exits 1 with "no such ...", never a success line', async () => {
    const cases: Array<[string[], RegExp]> = [
      [['keys', 'rm', 'nope'], /^router: no such API key 'nope'; see `router keys list`\n$/],
      [['keys', 'rename', 'nope', 'x'], /^router: no such API key 'nope'/],
      [['keys', 'disable', 'nope'], /^router: no such API key 'nope'/],
      [['keys', 'enable', 'nope'], /^router: no such API key 'nope'/],
      [['keys', 'limits', 'nope'], /^router: no such API key 'nope'/],
      [['providers', 'reset', 'nope'], /^router: no such provider 'nope'; see `router providers catalog` and `router providers nodes list`\n$/],
      [['providers', 'rm', 'nope'], /^router: no such connection 'nope'/],
      [['providers', 'test', 'nope'], /^router: no such connection 'nope'/],
      [['providers', 'nodes', 'rm', 'nope'], /^router: no such provider node 'nope'/],
      [['combos', 'rm', 'nope'], /^router: no such combo 'nope'/],
      [['combos', 'show', 'nope'], /^router: no such combo 'nope'/],
      [['webhooks', 'rm', 'nope'], /^router: no such webhook 'nope'/],
      [['memory', 'rm', '00000000-0000-4000-8000-000000000000'], /^router: no such memory '00000000-0000-4000-8000-000000000000'/],
    ];
    for (const [args, stderr] of cases) {
      const r = await R(...args);
      expect([r.exitCode, r.stdout], `${args.join(' ')}\n${show(r)}`).toEqual([1, '']);
      expect(r.stderr, args.join(' ')).toMatch(stderr);
    }
  });

  it('providers reset accepts an alias and names the provider it closed', async () => {
    expect((await ok('providers', 'reset', 'oai')).stdout).toBe('no circuit of openai was open\n');
  });

  it('nodes rm says it removed the node\'s connections too, as its help does', async () => {
    const node = json(await ok('providers', 'nodes', 'add', '--name', 'box', '--prefix', 'box', '--type', 'openai-compatible', '--base-url', mock.openaiBase, '--json'));
    await ok('providers', 'add', 'box', '--api-key', 'sk-box-0123456789');
    const help = await ok('providers', 'nodes', 'rm', '--help');
    expect(help.stdout).toMatch(/and its connections/);
    expect((await ok('providers', 'nodes', 'rm', 'box')).stdout).toBe(`removed node box (${node.id}) and its 1 connection\n`);
    const { connections } = (await router.manage('GET', '/api/providers')).json;
    expect(connections.some((c: { provider: string }) => c.provider === node.id)).toBe(false);
  });

  it('a duplicate key name is refused unless --force', async () => {
    const first = json(await ok('keys', 'add', '--name', 'twin', '--json'));
    const again = await R('keys', 'add', '--name', 'twin');
    expect(again.exitCode, show(again)).toBe(1);
    expect(again.stderr).toBe(`router: An API key named 'twin' already exists (${first.id}); choose another name, or pass --force\n`);
    const other = json(await ok('keys', 'add', '--name', 'other', '--json'));
    expect((await R('keys', 'rename', 'other', 'twin')).exitCode).toBe(1);
    const forced = json(await ok('keys', 'add', '--name', 'twin', '--force', '--json'));
    expect(forced.id).not.toBe(first.id);
    // two keys share the name now: the name is ambiguous, the id is not
    const amb = await R('keys', 'rm', 'twin');
    expect([amb.exitCode, amb.stderr]).toEqual([1, "router: 2 API keys are named 'twin'; use the id (see `router keys list`)\n"]);
    await ok('keys', 'rm', forced.id);
    await ok('keys', 'rm', 'twin');
    await ok('keys', 'rm', other.id);
  });
});

describe('keys like every other record', () => {
  it('rename, disable, enable and rm take a name; a disabled key is refused, an enabled one works again', async () => {
    const k = json(await ok('keys', 'add', '--name', 'laptop', '--json'));
    expect(await chat(k.key)).toBe(200);
    expect((await ok('keys', 'rename', 'laptop', 'laptop-2')).stdout).toBe(`renamed key laptop (${k.id}) to laptop-2\n`);
    expect((await ok('keys', 'disable', 'laptop-2')).stdout).toBe(`disabled key laptop-2 (${k.id})\n`);
    expect(await chat(k.key)).toBe(401);
    expect((await ok('keys', 'list')).stdout).toMatch(new RegExp(`${k.id}\\s+laptop-2\\s+\\S+\\s+proxy\\s+disabled`));
    expect((await ok('keys', 'enable', 'laptop-2')).stdout).toBe(`enabled key laptop-2 (${k.id})\n`);
    expect(await chat(k.key)).toBe(200);
    expect((await ok('keys', 'rm', 'laptop-2')).stdout).toBe(`deleted key laptop-2 (${k.id})\n`);
  });

  it('limits: per-key daily requests and tokens are set from the CLI and enforced by the daemon', async () => {
    const k = json(await ok('keys', 'add', '--name', 'metered', '--json'));
    const set = json(await ok('keys', 'limits', 'metered', '--requests-per-day', '2', '--tokens-per-day', '5000', '--tokens-per-month', '90000', '--json'));
    expect(set).toEqual({
      id: k.id,
      name: 'metered',
      dailyRequestLimit: 2,
      tokenLimits: [
        { scope: 'global', period: 'day', limit: 5000 },
        { scope: 'global', period: 'month', limit: 90000 },
      ],
      budget: null,
    });
    expect((await router.manage('GET', `/api/keys/${k.id}`)).json).toMatchObject({ dailyRequestLimit: 2 });
    expect((await ok('keys', 'limits', 'metered')).stdout).toMatch(/requests per day\s+2\n\s+tokens per day\s+5,000\n\s+tokens per month\s+90,000/);
    expect(await chat(k.key)).toBe(200);
    expect(await chat(k.key)).toBe(200);
    expect(await chat(k.key)).toBe(429);
    const reset = json(await ok('keys', 'limits', 'metered', '--requests-per-day', 'default', '--tokens-per-month', 'unlimited', '--json'));
    expect(reset).toMatchObject({ dailyRequestLimit: null, tokenLimits: [{ scope: 'global', period: 'day', limit: 5000 }] });
    const bad = await R('keys', 'limits', 'metered', '--requests-per-day', 'lots');
    expect(bad.exitCode).toBe(2);
  });

  it('budget: a USD budget set from the CLI (add and limits) is shown, enforced on one machine with 429 budget_exceeded, and removed', async () => {
    const k = json(await ok('keys', 'add', '--name', 'spender', '--budget', '0.0004', '--budget-period', 'day', '--json'));
    expect((await router.manage('GET', `/api/keys/${k.id}`)).json.budget).toEqual({ period: 'day', usd: 0.0004 });
    // gpt-4o-mini is priced: a request reserves its estimate (no max_tokens: the model's own cap), far above $0.0004.
    const res = await fetch(`${router.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${k.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] }),
    });
    expect(res.status).toBe(429);
    expect(((await res.json()) as any).error).toMatchObject({ type: 'rate_limit_error', code: 'budget_exceeded', limit: 0.0004 });
    const raised = json(await ok('keys', 'limits', 'spender', '--budget', '5', '--json'));
    expect(raised.budget).toEqual({ period: 'day', usd: 5 });
    expect((await ok('keys', 'limits', 'spender')).stdout).toMatch(/budget\s+\$5 per UTC day/);
    expect(await chat(k.key)).toBe(200);
    const q = (await router.manage('GET', `/api/quotas/${k.id}`)).json.budget;
    expect(q).toMatchObject({ period: 'day', usd: 5 });
    expect(q.usedUsd).toBeGreaterThan(0);
    expect(q.usedUsd).toBeLessThan(0.001);
    const monthly = json(await ok('keys', 'limits', 'spender', '--budget-period', 'month', '--json'));
    expect(monthly.budget).toEqual({ period: 'month', usd: 5 });
    expect(json(await ok('keys', 'limits', 'spender', '--budget', 'none', '--json')).budget).toBeNull();
    expect((await R('keys', 'limits', 'spender', '--budget', '-3')).exitCode).toBe(2);
    expect((await R('keys', 'limits', 'spender', '--budget-period', 'week')).exitCode).toBe(2);
    const bad = await router.manage('PATCH', `/api/keys/${k.id}`, { budget: { period: 'year', usd: 1 } });
    expect(bad.status).toBe(400);
    expect(bad.json.error).toMatchObject({ type: expect.any(String), message: expect.stringContaining('period') });
  });

  it('a model:<glob> scope alone implies proxy, so a restricted key works (for its models only)', async () => {
    const k = json(await ok('keys', 'add', '--name', 'narrow', '--scope', 'model:openai/gpt-4o-mini*', '--json'));
    expect(k.scopes).toEqual(['proxy', 'model:openai/gpt-4o-mini*']);
    expect(await chat(k.key, 'openai/gpt-4o-mini')).toBe(200);
    expect(await chat(k.key, 'openai/gpt-4.1')).toBe(403);
  });

  it('usage --by key shows key names', async () => {
    const k = json(await ok('keys', 'add', '--name', 'named-in-usage', '--json'));
    expect(await chat(k.key)).toBe(200);
    let rows: Array<{ key: string; name: string | null }> = [];
    for (let i = 0; i < 50 && !rows.some((r) => r.key === k.id); i++) {
      rows = json(await ok('usage', '--by', 'key', '--json')).breakdown.rows;
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(rows.find((r) => r.key === k.id)?.name).toBe('named-in-usage');
    expect((await ok('usage', '--by', 'key')).stdout).toMatch(/\nnamed-in-usage\s+1\s/);
  });
});
