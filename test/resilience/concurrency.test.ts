/**
 * 200 parallel requests over a round-robin combo of three mock upstreams (three servers), one of them
 * failing: every request completes with its own answer, none is lost or answered twice, and the served
 * distribution is exactly what round-robin with failover says.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startMockUpstream, type MockRequest, type MockUpstream } from '../mocks/upstream.js';
import { startRouter, type RouterProcess } from '../support/router-daemon.js';

const N = 200;
let mocks: Record<'a' | 'b' | 'c', MockUpstream>;
let router: RouterProcess;
let key: string;

/** Echoes the request's tag (its message) after a short delay, so requests overlap. */
const echo = (name: string) => (req: MockRequest) => ({
  type: 'delay' as const,
  ms: 20,
  then: { type: 'text' as const, text: `${name}:${req.json?.messages?.[0]?.content}` },
});

beforeAll(async () => {
  mocks = { a: await startMockUpstream(), b: await startMockUpstream(), c: await startMockUpstream() };
  mocks.a.handle(echo('a'));
  mocks.b.handle(() => ({ type: 'delay', ms: 20, then: { type: 'status', status: 500, message: 'b is down' } }));
  mocks.c.handle(echo('c'));
  router = await startRouter();
  key = await router.createKey();
  await router.addConnection({ provider: 'openai', apiKey: 'sk-a', providerSpecificData: { baseUrl: mocks.a.openaiBase } });
  await router.addConnection({ provider: 'groq', apiKey: 'sk-b', providerSpecificData: { baseUrl: mocks.b.openaiBase } });
  await router.addConnection({ provider: 'deepseek', apiKey: 'sk-c', providerSpecificData: { baseUrl: mocks.c.openaiBase } });
  const r = await router.manage('POST', '/api/combos', { name: 'trio', strategy: 'round-robin', models: ['openai/m', 'groq/m', 'deepseek/m'] });
  expect(r.status).toBe(201);
});
afterAll(async () => {
  await router?.stop();
  for (const m of Object.values(mocks ?? {})) await m.close();
});

describe('concurrency', () => {
  it(`${N} parallel requests, one of three upstreams failing: all complete, none lost, round-robin distribution`, async () => {
    const t0 = performance.now();
    const results = await Promise.all(
      Array.from({ length: N }, async (_, i) => {
        const res = await fetch(`${router.url}/v1/chat/completions`, {
          method: 'POST',
          headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
          body: JSON.stringify({ model: 'trio', messages: [{ role: 'user', content: `req-${i}` }] }),
        });
        const json = (await res.json()) as any;
        return { i, status: res.status, text: json?.choices?.[0]?.message?.content as string | undefined, json };
      }),
    );
    const ms = performance.now() - t0;

    // Every request completed with 200 and its own answer.
    const failed = results.filter((r) => r.status !== 200);
    expect(failed.map((r) => JSON.stringify(r.json))).toEqual([]);
    for (const r of results) expect(r.text).toMatch(new RegExp(`^[ac]:req-${r.i}$`));

    // None lost or doubled: the healthy upstreams answered each tag exactly once.
    const answered = [...mocks.a.requests, ...mocks.c.requests]
      .filter((q) => q.endpoint === 'openai.chat')
      .map((q) => q.json.messages[0].content as string)
      .sort();
    expect(answered).toEqual(Array.from({ length: N }, (_, i) => `req-${i}`).sort());

    // Round-robin over [a, b, c]: primaries a 67, b 67, c 66; b's requests fail over to the next in
    // cyclic order (c), whether b answered 500 or its circuit was already open.
    const served = { a: results.filter((r) => r.text!.startsWith('a:')).length, c: results.filter((r) => r.text!.startsWith('c:')).length };
    const bCalls = mocks.b.requests.filter((q) => q.endpoint === 'openai.chat').length;
    console.log(`${N} parallel over round-robin [a, b(failing), c]: served a=${served.a} c=${served.c}, b called ${bCalls}x, ${ms.toFixed(0)} ms`);
    expect(served).toEqual({ a: 67, c: 133 });
    // b was tried until its circuit opened (default threshold 5), never more than its 67 primaries.
    expect(bCalls).toBeGreaterThanOrEqual(5);
    expect(bCalls).toBeLessThanOrEqual(67);

    // The daemon is still healthy and state is consistent: b's circuit is open after the streak.
    const state = await router.manage('GET', '/api/resilience');
    expect(state.json.breakers).toEqual([expect.objectContaining({ provider: 'groq', state: 'open' })]);
  });
});
