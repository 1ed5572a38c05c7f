/**
 * Combo strategies end to end: which target serves, request after request, through the real daemon.
 * Targets are distinct providers (`openai/a`, `groq/b`, `deepseek/c`) on one mock; the reply names the
 * model that served.
 */
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { chat, clearResilience, combo, content, script, setup, type Env } from './helpers.js';

let env: Env;

beforeAll(async () => {
  env = await setup({ providers: ['openai', 'groq', 'deepseek'] });
});
afterAll(async () => {
  await env?.stop();
});
beforeEach(() => script(env.mock));
afterEach(async () => {
  env.mock.reset();
  await clearResilience(env);
});

/** Sends `n` requests, `parallel` at a time, and counts who served them (all must succeed). */
async function servedCounts(model: string, n: number, parallel = 1): Promise<{ counts: Record<string, number>; order: string[] }> {
  const counts: Record<string, number> = {};
  const order: string[] = [];
  for (let i = 0; i < n; i += parallel) {
    const batch = await Promise.all(Array.from({ length: Math.min(parallel, n - i) }, () => chat(env, model)));
    for (const r of batch) {
      expect(r.status, r.text).toBe(200);
      const who = content(r)!.replace('served by ', '');
      order.push(who);
      counts[who] = (counts[who] ?? 0) + 1;
    }
  }
  return { counts, order };
}

describe('combo strategies', () => {
  it('priority: declared order, always the first healthy target', async () => {
    await combo(env, { name: 's-priority', strategy: 'priority', models: ['groq/b', 'openai/a', 'deepseek/c'] });
    const { counts } = await servedCounts('s-priority', 6);
    expect(counts).toEqual({ b: 6 });
  });

  it('priority is the default strategy', async () => {
    const rec = await combo(env, { name: 's-default', models: ['deepseek/c', 'openai/a'] });
    expect(rec.strategy).toBe('priority');
    const { counts } = await servedCounts('s-default', 3);
    expect(counts).toEqual({ c: 3 });
  });

  it('round-robin: the primary rotates one step per request', async () => {
    await combo(env, { name: 's-rr', strategy: 'round-robin', models: ['openai/a', 'groq/b', 'deepseek/c'] });
    const { order } = await servedCounts('s-rr', 9);
    expect(order).toEqual(['a', 'b', 'c', 'a', 'b', 'c', 'a', 'b', 'c']);
  });

  it('least-used: the target with the fewest served requests goes first (ties in declared order)', async () => {
    await combo(env, { name: 's-least', strategy: 'least-used', models: ['openai/a', 'groq/b', 'deepseek/c'] });
    const { order } = await servedCounts('s-least', 6);
    expect(order).toEqual(['a', 'b', 'c', 'a', 'b', 'c']);
  });

  it('least-used under a burst: 30 requests planned before any reply still spread evenly', async () => {
    await combo(env, { name: 's-least-burst', strategy: 'least-used', models: ['openai/a', 'groq/b', 'deepseek/c'] });
    env.mock.reset();
    script(env.mock, {
      a: { type: 'delay', ms: 1500, then: { type: 'text', text: 'served by a' } },
      b: { type: 'delay', ms: 1500, then: { type: 'text', text: 'served by b' } },
      c: { type: 'delay', ms: 1500, then: { type: 'text', text: 'served by c' } },
    });
    const { counts } = await servedCounts('s-least-burst', 30, 30);
    expect(counts).toEqual({ a: 10, b: 10, c: 10 });
  });

  // 450 draws with weights 1:2:3; the share of each target must be within 7.5 percentage points of
  // weight/sum: at least 3.2 standard deviations for every target (false alarm about 0.2 %).
  it('weighted: the primary is drawn with probability weight/sum (450 requests, tolerance 7.5 points)', async () => {
    await combo(env, {
      name: 's-weighted',
      strategy: 'weighted',
      models: [
        { model: 'openai/a', weight: 1 },
        { model: 'groq/b', weight: 2 },
        { model: 'deepseek/c', weight: 3 },
      ],
    });
    const n = 450;
    const { counts } = await servedCounts('s-weighted', n, 50);
    const share = (k: string) => (counts[k] ?? 0) / n;
    console.log(`weighted 1:2:3 over ${n}: a=${share('a').toFixed(3)} b=${share('b').toFixed(3)} c=${share('c').toFixed(3)} (expected .167/.333/.500)`);
    expect(Math.abs(share('a') - 1 / 6)).toBeLessThan(0.075);
    expect(Math.abs(share('b') - 2 / 6)).toBeLessThan(0.075);
    expect(Math.abs(share('c') - 3 / 6)).toBeLessThan(0.075);
  });

  it('weighted: when the drawn primary fails, the rest follow by descending weight', async () => {
    await combo(env, {
      name: 's-weighted-fail',
      strategy: 'weighted',
      models: [
        { model: 'openai/a', weight: 1 },
        { model: 'groq/b', weight: 5 },
        { model: 'deepseek/c', weight: 3 },
      ],
    });
    env.mock.reset();
    script(env.mock, { b: { type: 'status', status: 503 } });
    const { counts } = await servedCounts('s-weighted-fail', 60, 10);
    // b never serves; when b was drawn (5/9) c (weight 3) follows; when a or c was drawn they serve.
    expect(counts.b).toBeUndefined();
    expect((counts.c ?? 0) > (counts.a ?? 0)).toBe(true);
  });

  // 300 draws: 10 points is 3.7 standard deviations of a 1/3 share.
  it('random: every target gets a fair share (300 requests, tolerance 10 points of 1/3)', async () => {
    await combo(env, { name: 's-random', strategy: 'random', models: ['openai/a', 'groq/b', 'deepseek/c'] });
    const n = 300;
    const { counts } = await servedCounts('s-random', n, 50);
    console.log(`random over ${n}: ${JSON.stringify(counts)}`);
    for (const k of ['a', 'b', 'c']) expect(Math.abs((counts[k] ?? 0) / n - 1 / 3)).toBeLessThan(0.1);
  });

  it('latency-optimized: once measured, the fastest target goes first', async () => {
    await combo(env, { name: 's-latency', strategy: 'latency-optimized', models: ['openai/a', 'groq/b'] });
    // Request 1: a's connection drops (a network failure: no cooldown), b serves and is measured fast.
    // Request 2: a, unmeasured, counts as the mean and keeps its declared place first; it is slow
    // (~150 ms, measured). From then on b (fast) goes first.
    let calls = 0;
    env.mock.reset();
    script(env.mock, {
      a: () => (calls++ === 0 ? { type: 'drop-mid-stream' } : { type: 'delay', ms: 150, then: { type: 'text', text: 'served by a' } }),
    });
    expect(content(await chat(env, 's-latency'))).toBe('served by b');
    expect(content(await chat(env, 's-latency'))).toBe('served by a');
    const { counts } = await servedCounts('s-latency', 5);
    expect(counts).toEqual({ b: 5 });
  });

  it('cost-optimized: the cheapest target (price table) goes first', async () => {
    for (const [provider, model, price] of [
      ['openai', 'pricey', 10],
      ['groq', 'cheap', 0.1],
      ['deepseek', 'mid', 1],
    ] as const) {
      const r = await env.router.manage('PUT', `/api/pricing/${provider}/${model}`, { input: price, output: price * 2 });
      expect(r.status).toBe(200);
    }
    await combo(env, { name: 's-cost', strategy: 'cost-optimized', models: ['openai/pricey', 'deepseek/mid', 'groq/cheap'] });
    const { counts } = await servedCounts('s-cost', 3);
    expect(counts).toEqual({ cheap: 3 });
    // The cheapest failing: the next cheapest takes over.
    env.mock.reset();
    script(env.mock, { cheap: { type: 'status', status: 503 } });
    expect(content(await chat(env, 's-cost'))).toBe('served by mid');
  });
});
