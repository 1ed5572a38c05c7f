/**
 * Account-wide limits (issue 30 item 5), end to end against mock upstreams: a 429 whose rate-limit headers
 * say one of the account's limits is used up (Anthropic `anthropic-ratelimit-*-remaining: 0` with its
 * reset, OpenAI `x-ratelimit-remaining-*: 0` with `x-ratelimit-reset-*`) or a usage-limit body with
 * `resets_at` (Codex) cools the whole account, every model, until that reset; the remaining quota replies
 * report is kept per account, listed by GET /api/accounts and `router accounts`, and the `headroom` account
 * strategy sends requests to the account with the most left.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { parseDurationMs, exhaustedSeconds } from '../../src/daemon/routing/account-limits.js';
import type { MockRequest } from '../mocks/upstream.js';
import { accountOf } from '../mocks/prompt-cache.js';
import { runRouter } from '../support/cli.js';
import { chat, clearResilience, settings, setup, type Env } from '../resilience/helpers.js';

describe('reading rate-limit headers', () => {
  it('OpenAI reset durations', () => {
    expect(parseDurationMs('6m0s')).toBe(360_000);
    expect(parseDurationMs('20ms')).toBe(20);
    expect(parseDurationMs('1h2m3.5s')).toBe(3_723_500);
    expect(parseDurationMs('0s')).toBe(0);
    expect(parseDurationMs('soon')).toBeUndefined();
  });
  it('a used-up window with a reset says how long the account waits; one with quota left says nothing', () => {
    const now = Date.parse('2026-01-01T00:00:00Z');
    expect(exhaustedSeconds({ 'x-ratelimit-remaining-requests': '0', 'x-ratelimit-reset-requests': '6m0s', 'x-ratelimit-remaining-tokens': '100' }, now)).toBe(360);
    expect(exhaustedSeconds({ 'x-ratelimit-remaining-requests': '3', 'x-ratelimit-reset-requests': '6m0s' }, now)).toBeUndefined();
    expect(exhaustedSeconds({ 'anthropic-ratelimit-tokens-remaining': '0', 'anthropic-ratelimit-tokens-reset': '2026-01-01T01:00:00Z', 'anthropic-ratelimit-requests-remaining': '10' }, now)).toBe(3600);
    expect(exhaustedSeconds({ 'anthropic-ratelimit-unified-status': 'rejected', 'anthropic-ratelimit-unified-reset': String(now / 1000 + 7200) }, now)).toBe(7200);
    expect(exhaustedSeconds({ 'x-codex-primary-used-percent': '100.0', 'x-codex-primary-reset-after-seconds': '900' }, now)).toBe(900);
  });
});

describe('account-wide limits, end to end', () => {
  let env: Env;
  let target: string[];
  beforeAll(async () => {
    env = await setup({ providers: [] });
    for (const [name, key, priority] of [['one', 'sk-one', 1], ['two', 'sk-two', 2]] as const) {
      await env.router.addConnection({ provider: 'openai', name, apiKey: key, priority, providerSpecificData: { baseUrl: env.mock.openaiBase } });
      await env.router.addConnection({ provider: 'anthropic', name: `a-${name}`, apiKey: `sk-ant-${name}`, priority, providerSpecificData: { baseUrl: env.mock.anthropicBase } });
      // A pool of its own for the headroom test (the tests above leave limits on the openai accounts).
      await env.router.addConnection({ provider: 'groq', name: `g-${name}`, apiKey: `sk-g-${name}`, priority, providerSpecificData: { baseUrl: env.mock.openaiBase } });
    }
    target = ['--home', env.router.home, '--port', String(env.router.port)];
  });
  afterAll(async () => {
    await env?.stop();
  });
  afterEach(async () => {
    env.mock.reset();
    await clearResilience(env);
    await settings(env, { accountStrategy: 'fill-first' });
  });

  const served = (endpoint: string, model: string) => env.mock.requests.filter((r) => r.endpoint === endpoint && r.model === model).map(accountOf);
  const account = async (name: string) => ((await env.router.manage('GET', '/api/accounts')).json.accounts as any[]).find((a) => a.name === name);
  const anthropic = async (model: string) => {
    const res = await fetch(`${env.router.url}/v1/messages`, {
      method: 'POST',
      headers: { 'x-api-key': env.key, 'content-type': 'application/json', 'anthropic-version': '2023-06-01' },
      body: JSON.stringify({ model: `anthropic/${model}`, max_tokens: 16, messages: [{ role: 'user', content: 'hi' }] }),
    });
    return { status: res.status, text: await res.text() };
  };

  it('Anthropic: a 429 with a token limit used up until a reset cools the account for every model until then', async () => {
    const reset = new Date(Date.now() + 3600_000).toISOString().replace(/\.\d+Z$/, 'Z');
    env.mock.handle((req: MockRequest) =>
      accountOf(req) === 'sk-ant-one' && req.model === 'claude-a'
        ? {
            type: 'status',
            status: 429,
            errorType: 'rate_limit_error',
            message: 'This request would exceed your organization’s rate limit of 400,000 input tokens per minute.',
            headers: { 'retry-after': '2', 'anthropic-ratelimit-input-tokens-remaining': '0', 'anthropic-ratelimit-input-tokens-limit': '400000', 'anthropic-ratelimit-input-tokens-reset': reset, 'anthropic-ratelimit-requests-remaining': '3999' },
          }
        : undefined,
    );
    expect((await anthropic('claude-a')).status).toBe(200);
    expect(served('anthropic.messages', 'claude-a')).toEqual(['sk-ant-one', 'sk-ant-two']);
    // Another model: account one is not asked at all.
    expect((await anthropic('claude-b')).status).toBe(200);
    expect(served('anthropic.messages', 'claude-b')).toEqual(['sk-ant-two']);
    const one = await account('a-one');
    expect(Date.parse(one.coolingUntil) - Date.now()).toBeGreaterThan(3500_000);
    expect(one.windows).toEqual(expect.arrayContaining([expect.objectContaining({ name: 'input-tokens', remaining: 0, limit: 400000 })]));
  });

  it('OpenAI: a 429 with x-ratelimit-remaining-requests 0 cools the account until x-ratelimit-reset-requests, every model', async () => {
    env.mock.handle((req: MockRequest) =>
      accountOf(req) === 'sk-one' && req.model === 'gpt-a'
        ? { type: 'status', status: 429, code: 'rate_limit_exceeded', message: 'Rate limit reached for requests', headers: { 'x-ratelimit-limit-requests': '500', 'x-ratelimit-remaining-requests': '0', 'x-ratelimit-reset-requests': '20m0s' } }
        : undefined,
    );
    expect((await chat(env, 'openai/gpt-a')).status).toBe(200);
    expect((await chat(env, 'openai/gpt-b')).status).toBe(200);
    expect(served('openai.chat', 'gpt-a')).toEqual(['sk-one', 'sk-two']);
    expect(served('openai.chat', 'gpt-b')).toEqual(['sk-two']);
    const cooling = (await env.router.manage('GET', '/api/resilience/model-cooldowns')).json.cooldowns as any[];
    const one = cooling.find((c) => c.model === '*');
    expect(one.remainingSeconds).toBeGreaterThan(1150);
    expect(one.remainingSeconds).toBeLessThanOrEqual(1200);
  });

  it('Codex-style usage_limit_reached with resets_at cools the whole account until resets_at, honoured for another model', async () => {
    const resetsAt = Math.floor(Date.now() / 1000) + 5400;
    env.mock.handle((req: MockRequest) =>
      accountOf(req) === 'sk-one' && req.model === 'gpt-c'
        ? { type: 'status', status: 429, body: { error: { type: 'usage_limit_reached', message: 'The usage limit has been reached', plan_type: 'plus', resets_at: resetsAt } } }
        : undefined,
    );
    expect((await chat(env, 'openai/gpt-c')).status).toBe(200);
    expect((await chat(env, 'openai/gpt-d')).status).toBe(200);
    expect(served('openai.chat', 'gpt-d')).toEqual(['sk-two']);
    const one = await account('one');
    expect(Math.abs(Date.parse(one.coolingUntil) / 1000 - resetsAt)).toBeLessThan(5);
  });

  it('remaining quota from reply headers, shown by /api/accounts and router accounts; headroom prefers the account with most left', async () => {
    const left: Record<string, number> = { 'sk-g-one': 12, 'sk-g-two': 80 };
    env.mock.handle((req: MockRequest) => {
      const key = accountOf(req);
      if (!(key in left) || req.endpoint !== 'openai.chat') return undefined;
      left[key]!--;
      return { type: 'text', text: `from ${key}`, headers: { 'x-ratelimit-limit-requests': '100', 'x-ratelimit-remaining-requests': String(left[key]), 'x-ratelimit-reset-requests': '30s', 'x-ratelimit-limit-tokens': '40000', 'x-ratelimit-remaining-tokens': '39000', 'x-ratelimit-reset-tokens': '90ms' } };
    });
    await settings(env, { accountStrategy: 'headroom' });
    const order: string[] = [];
    for (let i = 0; i < 5; i++) {
      const r = await chat(env, 'groq/gpt-h');
      expect(r.status).toBe(200);
      order.push(r.json.choices[0].message.content);
    }
    // Unknown at first (priority order: one), then one reported 11 % left, two (unknown) is asked, reports 79 %: two from then on.
    expect(order).toEqual(['from sk-g-one', 'from sk-g-two', 'from sk-g-two', 'from sk-g-two', 'from sk-g-two']);
    const one = await account('g-one');
    expect(one.headroom).toBeCloseTo(0.11, 2);
    expect(one.windows.find((w: any) => w.name === 'requests')).toMatchObject({ limit: 100, remaining: 11 });
    expect((await account('g-two')).headroom).toBeCloseTo(0.76, 2);

    const cli = await runRouter(['accounts', ...target]);
    expect(cli.exitCode, cli.stderr).toBe(0);
    expect(cli.stdout).toMatch(/groq\s+g-one\s+api-key\s+active\s+requests 11\/100, tokens 39k\/40k\s+11%/i);
    expect(cli.stdout).toContain('account strategy: headroom');
    const json = JSON.parse((await runRouter(['accounts', '--json', ...target])).stdout);
    expect(json.accounts.find((a: any) => a.name === 'g-two')).toMatchObject({ provider: 'groq', headroom: expect.any(Number) });
  });

  it('headroom is a known account strategy (settings refuse unknown ones)', async () => {
    const r = await env.router.manage('PATCH', '/api/settings', { accountStrategy: 'most-left' });
    expect(r.status).toBe(400);
  });
});
