/**
 * Failover through a combo, end to end: each failure kind of the first target hands the request to the
 * second; per-target timeouts are honored (measured at the mock and at the client); streams fail over
 * only before their first byte; a combo whose targets all fail answers 502 naming the last error.
 */
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Behavior } from '../mocks/upstream.js';
import { chat, clearResilience, combo, content, hits, script, setup, stream, type Env } from './helpers.js';

/** Per-target timeout of the timeout combos, and the allowance over +10 % (event loop, spawn, HTTP). */
const TIMEOUT_MS = 500;
const FIXED_ALLOWANCE_MS = 50;
const within10 = (ms: number) => ms * 1.1 + FIXED_ALLOWANCE_MS;

let env: Env;
const measured: string[] = [];

beforeAll(async () => {
  env = await setup({ providers: ['openai', 'groq', 'deepseek'] });
  await combo(env, { name: 'fo', strategy: 'priority', models: ['openai/a', 'groq/b'] });
  await combo(env, { name: 'fo-t', strategy: 'priority', models: ['openai/ta', 'groq/tb'], targetTimeoutMs: TIMEOUT_MS });
  await combo(env, { name: 'fo-one', models: ['openai/solo'], targetTimeoutMs: TIMEOUT_MS });
  await combo(env, { name: 'fo-all', models: ['openai/x1', 'groq/x2', 'deepseek/x3'] });
});
afterAll(async () => {
  if (measured.length) console.log(`per-target timeout ${TIMEOUT_MS} ms, measured:\n  ${measured.join('\n  ')}`);
  await env?.stop();
});
beforeEach(() => script(env.mock));
afterEach(async () => {
  env.mock.reset();
  await clearResilience(env);
});

describe('non-streaming failover: the first target fails, the second serves', () => {
  const kinds: Array<[string, Behavior]> = [
    ['500', { type: 'status', status: 500 }],
    ['502', { type: 'status', status: 502 }],
    ['503', { type: 'status', status: 503, message: 'overloaded' }],
    ['504', { type: 'status', status: 504 }],
    ['429', { type: 'status', status: 429, headers: { 'retry-after': '1' } }],
    ['401', { type: 'status', status: 401 }],
    ['403', { type: 'status', status: 403 }],
    ['408', { type: 'status', status: 408 }],
    ['connection dropped mid-body', { type: 'drop-mid-stream' }],
    ['connection reset before any answer', { type: 'custom', fn: (_req, res) => void res.socket?.destroy() }],
    ['empty 200 body', { type: 'empty-stream' }],
  ];
  for (const [name, behavior] of kinds) {
    it(name, async () => {
      script(env.mock, { a: behavior });
      const r = await chat(env, 'fo');
      expect(r.status, r.text).toBe(200);
      expect(content(r)).toBe('served by b');
      expect(hits(env.mock, 'a')).toHaveLength(1);
      expect(hits(env.mock, 'b')).toHaveLength(1);
    });
  }

  it('a 400 (the request is at fault) is not retried elsewhere: the combo answers 502 naming it', async () => {
    script(env.mock, { a: { type: 'status', status: 400, message: 'bad field' } });
    const r = await chat(env, 'fo');
    expect(r.status).toBe(502);
    expect(r.json.error.code).toBe('combo_failed');
    expect(r.json.error.message).toContain('bad field');
    expect(hits(env.mock, 'b')).toHaveLength(0);
  });
});

describe('per-target timeout (targetTimeoutMs 500; tolerance +10 % + 50 ms)', () => {
  /** Arrival times at the mock per model, so the failing attempt is timed where it happens. */
  function arrivals(): Record<string, number[]> {
    const at: Record<string, number[]> = {};
    env.mock.handle((req) => {
      (at[req.model ?? '?'] ??= []).push(performance.now());
      return undefined;
    });
    return at;
  }

  it('a hanging target is abandoned after the timeout and the next one serves', async () => {
    script(env.mock, { ta: { type: 'hang' } });
    const at = arrivals();
    const r = await chat(env, 'fo-t');
    expect(r.status, r.text).toBe(200);
    expect(content(r)).toBe('served by tb');
    const attempt = at.tb![0]! - at.ta![0]!;
    measured.push(`hang, non-stream: failing attempt ${attempt.toFixed(0)} ms (mock), whole call ${r.ms.toFixed(0)} ms (client)`);
    expect(attempt).toBeGreaterThanOrEqual(TIMEOUT_MS - FIXED_ALLOWANCE_MS); // arrival at the mock lags the send under load
    expect(attempt).toBeLessThanOrEqual(within10(TIMEOUT_MS));
    expect(r.ms).toBeGreaterThanOrEqual(TIMEOUT_MS);
    expect(r.ms).toBeLessThanOrEqual(within10(TIMEOUT_MS) + 100); // + the second target's own reply
  });

  it('a target slower than the timeout (delay 1500 ms) is abandoned; one within it (delay 150 ms) is kept', async () => {
    script(env.mock, { ta: { type: 'delay', ms: 1500 } });
    const at = arrivals();
    const slow = await chat(env, 'fo-t');
    expect(content(slow)).toBe('served by tb');
    const attempt = at.tb![0]! - at.ta![0]!;
    measured.push(`delay 1500, non-stream: failing attempt ${attempt.toFixed(0)} ms (mock)`);
    expect(attempt).toBeGreaterThanOrEqual(TIMEOUT_MS - FIXED_ALLOWANCE_MS); // arrival at the mock lags the send under load
    expect(attempt).toBeLessThanOrEqual(within10(TIMEOUT_MS));

    env.mock.reset();
    script(env.mock, { ta: { type: 'delay', ms: 150, then: { type: 'text', text: 'served by ta' } } });
    const ok = await chat(env, 'fo-t');
    expect(content(ok)).toBe('served by ta');
    expect(hits(env.mock, 'tb')).toHaveLength(0);
  });

  it('the only target hanging: 502 at the timeout, measured at the client', async () => {
    script(env.mock, { solo: { type: 'hang' } });
    const r = await chat(env, 'fo-one');
    measured.push(`hang, single-target combo: 502 after ${r.ms.toFixed(0)} ms (client)`);
    expect(r.status).toBe(502);
    expect(r.json.error.message).toMatch(/TIMEOUT/);
    expect(r.ms).toBeGreaterThanOrEqual(TIMEOUT_MS);
    expect(r.ms).toBeLessThanOrEqual(within10(TIMEOUT_MS));
  });

  it('streaming: the timeout covers the time to the first content; a hang fails over, timed at the client', async () => {
    script(env.mock, { solo: { type: 'hang' } });
    const one = await stream(env, 'fo-one');
    measured.push(`hang, streaming single target: 502 after ${one.ms.toFixed(0)} ms (client)`);
    expect(one.status).toBe(502);
    expect(one.ms).toBeGreaterThanOrEqual(TIMEOUT_MS);
    expect(one.ms).toBeLessThanOrEqual(within10(TIMEOUT_MS));

    env.mock.reset();
    script(env.mock, { ta: { type: 'hang' } });
    const at = arrivals();
    const s = await stream(env, 'fo-t');
    const attempt = at.tb![0]! - at.ta![0]!;
    measured.push(`hang, streaming failover: failing attempt ${attempt.toFixed(0)} ms (mock)`);
    expect(s.status).toBe(200);
    expect(s.text).toBe('served by tb');
    expect(attempt).toBeLessThanOrEqual(within10(TIMEOUT_MS));
  });

  it('streaming: headers in time but the first content too late (slow stream) also fails over', async () => {
    script(env.mock, { ta: { type: 'slow-stream', intervalMs: 700, then: { type: 'text', text: 'too late', chunks: 3 } } });
    const s = await stream(env, 'fo-t');
    expect(s.status).toBe(200);
    expect(s.text).toBe('served by tb');
    expect(s.raw).not.toContain('too late');
  });
});

describe('request deadline (requestDeadlineMs 1000) across attempts', () => {
  afterEach(async () => {
    await env.router.manage('PATCH', '/api/settings', { requestDeadlineMs: 600_000 });
  });

  it('a single target without a combo timeout is cut at the deadline: 504', async () => {
    await env.router.manage('PATCH', '/api/settings', { requestDeadlineMs: 1000 });
    script(env.mock, { dl: { type: 'hang' } });
    const r = await chat(env, 'openai/dl');
    measured.push(`deadline 1000, hanging single target: ${r.status} after ${r.ms.toFixed(0)} ms (client)`);
    expect(r.status).toBe(504);
    expect(r.json.error.message).toMatch(/TIMEOUT/);
    expect(r.ms).toBeGreaterThanOrEqual(1000);
    expect(r.ms).toBeLessThanOrEqual(1000 * 1.1 + FIXED_ALLOWANCE_MS);
  });

  it('the deadline caps the sum of attempts: the second target gets only what is left, the third none', async () => {
    await combo(env, { name: 'fo-deadline', models: ['openai/d1', 'groq/d2', 'deepseek/d3'], targetTimeoutMs: 700 });
    await env.router.manage('PATCH', '/api/settings', { requestDeadlineMs: 1000 });
    script(env.mock, { d1: { type: 'hang' }, d2: { type: 'hang' } });
    const r = await chat(env, 'fo-deadline');
    measured.push(`deadline 1000, combo of 700 ms targets, two hanging: ${r.status} after ${r.ms.toFixed(0)} ms (client)`);
    expect(r.status).toBe(502);
    expect(r.ms).toBeLessThanOrEqual(1000 * 1.1 + FIXED_ALLOWANCE_MS);
    expect(hits(env.mock, 'd3')).toHaveLength(0);
  });
});

describe('streaming failover before the first byte', () => {
  const kinds: Array<[string, Behavior]> = [
    ['empty stream', { type: 'empty-stream' }],
    ['content-filtered empty reply', { type: 'content-filter' }],
    ['503 before the stream', { type: 'status', status: 503 }],
    ['429 before the stream', { type: 'status', status: 429 }],
    ['in-stream error before any content', { type: 'stream-error', afterChunks: 0, status: 500 }],
    ['connection dropped before any content', { type: 'drop-mid-stream', afterChunks: 1 }],
  ];
  for (const [name, behavior] of kinds) {
    it(name, async () => {
      script(env.mock, { a: behavior });
      const s = await stream(env, 'fo');
      expect(s.status, s.raw).toBe(200);
      // Only the second target's stream reaches the client: its text, its model, one ending, no error.
      expect(s.text).toBe('served by b');
      expect(s.errors).toEqual([]);
      expect(s.done).toBe(true);
      for (const e of s.events) if (e.model !== undefined) expect(e.model).toBe('b');
      expect(s.events.filter((e) => e.choices?.[0]?.finish_reason).map((e) => e.choices[0].finish_reason)).toEqual(['stop']);
      expect(hits(env.mock, 'a')).toHaveLength(1);
      expect(hits(env.mock, 'b')).toHaveLength(1);
    });
  }
});

describe('translated streams (Anthropic Messages client, OpenAI-format upstreams)', () => {
  async function messages(model: string): Promise<{ status: number; raw: string; events: Array<{ event: string; data: any }> }> {
    const res = await fetch(`${env.router.url}/v1/messages`, {
      method: 'POST',
      headers: { 'x-api-key': env.key, 'content-type': 'application/json', 'anthropic-version': '2023-06-01' },
      body: JSON.stringify({ model, max_tokens: 50, stream: true, messages: [{ role: 'user', content: 'hi' }] }),
    });
    const raw = await res.text();
    const events = raw
      .split(/\n\n/)
      .filter((b) => b.trim())
      .map((b) => ({
        event: /^event: (.*)$/m.exec(b)?.[1] ?? '',
        data: JSON.parse(/^data: (.*)$/m.exec(b)?.[1] ?? 'null'),
      }));
    return { status: res.status, raw, events };
  }
  const text = (events: Array<{ event: string; data: any }>) =>
    events.filter((e) => e.event === 'content_block_delta').map((e) => e.data.delta.text).join('');

  it('a content-filtered first target fails over; the client sees one message from the second', async () => {
    script(env.mock, { a: { type: 'content-filter' } });
    const s = await messages('fo');
    expect(s.status).toBe(200);
    expect(text(s.events)).toBe('served by b');
    expect(s.events.filter((e) => e.event === 'message_start')).toHaveLength(1);
    expect(s.events.filter((e) => e.event === 'message_stop')).toHaveLength(1);
    expect(s.events.filter((e) => e.event === 'error')).toEqual([]);
  });

  it('a drop after content ends with one Anthropic error event and no switch', async () => {
    script(env.mock, { a: { type: 'drop-mid-stream', afterChunks: 3 } });
    const s = await messages('fo');
    expect(s.status).toBe(200);
    expect(text(s.events).length).toBeGreaterThan(0);
    expect(s.events.filter((e) => e.event === 'error')).toHaveLength(1);
    expect(s.events.at(-1)!.event).toBe('error');
    expect(hits(env.mock, 'b')).toHaveLength(0);
  });
});

describe('after the first byte: no silent switch', () => {
  it('a mid-stream drop ends the stream with one error event; the next target is not tried', async () => {
    script(env.mock, { a: { type: 'drop-mid-stream', afterChunks: 3, then: { type: 'text', text: 'one two three four five six', chunks: 6 } } });
    const s = await stream(env, 'fo');
    expect(s.status).toBe(200);
    expect(s.text.length).toBeGreaterThan(0);
    expect('one two three four five six'.startsWith(s.text)).toBe(true);
    expect(s.text).not.toBe('one two three four five six');
    expect(s.errors).toHaveLength(1);
    expect(s.errors[0].error.message).toBeTruthy();
    expect(s.raw).not.toContain('served by b');
    expect(hits(env.mock, 'b')).toHaveLength(0);
  });

  it('an in-stream error after content is passed on as one error event; the next target is not tried', async () => {
    script(env.mock, { a: { type: 'stream-error', afterChunks: 3, status: 500, message: 'exploded mid-way' } });
    const s = await stream(env, 'fo');
    expect(s.status).toBe(200);
    expect(s.text.length).toBeGreaterThan(0);
    expect(s.errors).toHaveLength(1);
    expect(JSON.stringify(s.errors[0])).toContain('exploded mid-way');
    expect(hits(env.mock, 'b')).toHaveLength(0);
  });
});

describe('all targets fail', () => {
  it('502 with the standard body naming the last error', async () => {
    script(env.mock, {
      x1: { type: 'status', status: 500, message: 'first broke' },
      x2: { type: 'hang' },
      x3: { type: 'status', status: 503, message: 'third overloaded' },
    });
    // x2 hangs: give this combo a short timeout for the test.
    const list = await env.router.manage('GET', '/api/combos');
    const rec = list.json.combos.find((c: any) => c.name === 'fo-all');
    await env.router.manage('PUT', `/api/combos/${rec.id}`, { name: 'fo-all', models: rec.models, targetTimeoutMs: 300 });
    const r = await chat(env, 'fo-all');
    expect(r.status).toBe(502);
    expect(r.json.error).toMatchObject({ type: expect.any(String), code: 'combo_failed' });
    expect(r.json.error.message).toContain("combo 'fo-all'");
    expect(r.json.error.message).toMatch(/\[(503|server_error)\]: third overloaded/);
    expect(r.json.error.message).toContain('third overloaded');
    expect(r.json.error.message).not.toContain('first broke');
    expect(['x1', 'x2', 'x3'].map((m) => hits(env.mock, m).length)).toEqual([1, 1, 1]);
  });

  it('streaming: 502 JSON before any byte when every target fails', async () => {
    script(env.mock, {
      x1: { type: 'empty-stream' },
      x2: { type: 'content-filter' },
      x3: { type: 'status', status: 500, message: 'last one down' },
    });
    const s = await stream(env, 'fo-all');
    expect(s.status).toBe(502);
    expect(s.headers.get('content-type')).toContain('application/json');
    expect(JSON.parse(s.raw).error).toMatchObject({ code: 'combo_failed' });
    expect(JSON.parse(s.raw).error.message).toContain('last one down');
  });
});
