/**
 * Hedged requests (issue 30 item 2): a combo with `hedgeAfterMs` starts its next target when the first has
 * sent no byte within that time; the first to answer is served, the other is aborted at once (the mock
 * sees its connection closed), both attempts are in the request log, and the cancelled one costs nothing.
 * Real daemon, mock upstream whose first target delays its first byte.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { chat, clearResilience, combo, content, hits, script, stream, until, type Env, setup } from '../resilience/helpers.js';

const SLOW_MS = 4000;
const HEDGE_MS = 150;

let env: Env;

beforeAll(async () => {
  env = await setup({ providers: ['openai', 'groq'] });
  await combo(env, { name: 'hedged', models: ['openai/slow', 'groq/b'], hedgeAfterMs: HEDGE_MS });
  await combo(env, { name: 'hedged-fast', models: ['openai/a', 'groq/b'], hedgeAfterMs: 1000 });
  await combo(env, { name: 'plain', models: ['openai/slow2', 'groq/b'] });
}, 60_000);

afterAll(async () => {
  await env?.stop();
});

beforeEach(async () => {
  env.mock.reset();
  await clearResilience(env);
  script(env.mock, {
    slow: { type: 'delay', ms: SLOW_MS, then: { type: 'text', text: 'served by slow' } },
    slow2: { type: 'delay', ms: 600, then: { type: 'text', text: 'served by slow2' } },
  });
});

const rowsOf = async (traceId: string | null, count: number) =>
  until(async () => {
    const rows = ((await env.router.manage('GET', '/api/logs?limit=50')).json.logs as any[]).filter((l) => l.traceId === traceId);
    return rows.length >= count ? rows : undefined;
  });

describe('hedged requests', () => {
  it('non-streaming: the second target serves well before the first one\'s delay; the first is aborted and logged as cancelled, unbilled', async () => {
    const r = await chat(env, 'hedged');
    expect(r.status, r.text).toBe(200);
    expect(content(r)).toBe('served by b');
    expect(r.ms).toBeLessThan(SLOW_MS / 2);
    // The mock saw the slow attempt's connection closed before it answered.
    const slow = hits(env.mock, 'slow');
    expect(slow).toHaveLength(1);
    await until(() => slow[0]!.aborted === true);
    const rows = await rowsOf(r.headers.get('x-router-trace-id'), 2);
    const cancelled = rows.find((x) => x.model === 'slow');
    const served = rows.find((x) => x.model === 'b');
    expect(served).toMatchObject({ status: 200 });
    expect(served.tokensOut).toBeGreaterThan(0);
    expect(cancelled).toMatchObject({ status: 499, tokensIn: 0, tokensOut: 0, costUsd: 0 });
    expect(cancelled.error).toMatch(/another target answered first/);
    expect(JSON.parse(cancelled.notes)).toMatchObject({ hedge: 'cancelled' });
  });

  it('streaming: the second target\'s stream is served, the first is aborted', async () => {
    const s = await stream(env, 'hedged');
    expect(s.status).toBe(200);
    expect(s.text).toBe('served by b');
    expect(s.done).toBe(true);
    expect(s.errors).toEqual([]);
    expect(s.ms).toBeLessThan(SLOW_MS / 2);
    // Read afresh on each poll: on a loaded machine the mock may record the slow request after the stream ended.
    await until(() => hits(env.mock, 'slow')[0]?.aborted === true);
    expect(hits(env.mock, 'slow')).toHaveLength(1);
    const rows = await rowsOf(s.headers.get('x-router-trace-id'), 2);
    expect(rows.map((x) => x.status).sort()).toEqual([200, 499]);
  });

  it('a first target that answers within the hedge delay is served alone: the next one is never started', async () => {
    const r = await chat(env, 'hedged-fast');
    expect(content(r)).toBe('served by a');
    await new Promise((res) => setTimeout(res, 100));
    expect(hits(env.mock, 'b')).toHaveLength(0);
  });

  it('without hedgeAfterMs the slow first target is waited for', async () => {
    const r = await chat(env, 'plain');
    expect(content(r)).toBe('served by slow2');
    expect(hits(env.mock, 'b')).toHaveLength(0);
  });
});
