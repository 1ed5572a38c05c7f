/**
 * Bounds on what router reads from an upstream (issue 27 item 4): a stream without line breaks was buffered
 * without limit (8 such streams took the daemon from 107 MB to 6.7 GB). Against the real daemon and a mock
 * upstream: a stream that never sends a newline ends with the client format's error while the daemon's RSS
 * stays bounded; one that started well ends with the format's own error event; a non-streaming body over
 * the reply cap is a 502 with the standard body.
 */
import { readFileSync } from 'node:fs';
import type { ServerResponse } from 'node:http';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { MockUpstream } from '../mocks/upstream.js';
import type { RouterProcess } from '../support/router-daemon.js';
import { startProxyEnv, type ProxyEnv } from '../support/proxy-env.js';

let env: ProxyEnv;
let mock: MockUpstream;
let router: RouterProcess;
let key: string;
const MiB = 1024 * 1024;

beforeAll(async () => {
  env = await startProxyEnv([{ provider: 'openai', apiKey: 'sk-up-openai' }]);
  ({ mock, router, key } = env);
  // Every test here fails attempts on purpose: keep the provider's circuit closed for the next one.
  expect((await router.manage('PATCH', '/api/settings', { breakerFailureThreshold: 1000 })).status).toBe(200);
}, 60_000);
afterEach(() => mock.reset());
afterAll(async () => {
  await env?.stop();
});

/** The daemon's resident set, bytes (Linux). */
function rss(): number {
  const line = readFileSync(`/proc/${router.pid}/status`, 'utf8')
    .split('\n')
    .find((l) => l.startsWith('VmRSS:'))!;
  return Number(/(\d+)/.exec(line)![1]) * 1024;
}

/** Waits until the response may be written again (or is gone). */
function drained(res: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    res.once('drain', resolve);
    res.once('close', resolve);
  });
}

/** Writes `bytes` with no line break, 1 MiB at a time with backpressure, then holds the connection open. */
async function writeWithoutNewline(res: ServerResponse, bytes: number, prefix = ''): Promise<void> {
  res.write(`${prefix}data: {"choices":[{"delta":{"content":"`);
  const piece = Buffer.alloc(MiB, 'x');
  for (let sent = 0; sent < bytes && !res.destroyed; sent += MiB) {
    if (!res.write(piece)) await drained(res);
  }
}

const chunk = (delta: object) => `data: ${JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', created: 1, model: 'gpt-4o', choices: [{ index: 0, delta, finish_reason: null }] })}\n\n`;

function post(path: string, body: unknown): Promise<Response> {
  return fetch(`${router.url}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(60_000),
  });
}

const chat = (stream: boolean) => ({ model: 'openai/gpt-4o', stream, messages: [{ role: 'user', content: 'hi' }] });

describe('an upstream stream without line breaks', () => {
  it('before any content: 8 at once end with a 502 standard body (default bound, 16 MiB); RSS stays bounded', async () => {
    // Each upstream would send 100 MB on one line (the mock stops when router hangs up).
    mock.handle(() => ({
      type: 'custom',
      fn: async (_req, res) => {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        await writeWithoutNewline(res, 100 * MiB);
      },
    }));
    const before = rss();
    let peak = before;
    const sampler = setInterval(() => {
      peak = Math.max(peak, rss());
    }, 20);
    try {
      const replies = await Promise.all(Array.from({ length: 8 }, () => post('/v1/chat/completions', chat(true))));
      for (const res of replies) {
        expect(res.status).toBe(502);
        const body = await res.json();
        expect(body.error).toMatchObject({ type: expect.any(String), code: expect.any(String) });
        expect(body.error.message).toMatch(/over 16 MiB/);
      }
    } finally {
      clearInterval(sampler);
    }
    // 8 streams x (16 MiB of line + what is held before the commit) and the GC's slack (about 200 MiB
    // measured); before the bound, 8 x 100 MB of line and a reply that never came.
    expect(peak - before).toBeLessThan(400 * MiB);
  }, 90_000);

  it('after content reached the client: the stream ends with the format\'s error event (OpenAI passthrough and Anthropic translated)', async () => {
    expect((await router.manage('PATCH', '/api/settings', { maxUpstreamEventBytes: 4 * MiB })).status).toBe(200);
    try {
      mock.handle(() => ({
        type: 'custom',
        fn: async (_req, res) => {
          res.writeHead(200, { 'content-type': 'text/event-stream' });
          res.write(chunk({ role: 'assistant', content: 'Hello' }));
          // A 10 MB line, then the connection is held open.
          await writeWithoutNewline(res, 10 * MiB);
        },
      }));
      const openai = await post('/v1/chat/completions', chat(true));
      expect(openai.status).toBe(200);
      const text = await openai.text();
      const events = text.split('\n\n').filter((e) => e.trim());
      expect(JSON.parse(events[0]!.slice('data: '.length)).choices[0].delta.content).toBe('Hello');
      // The last event is OpenAI's error event, on its own (the cut line before it is ended first).
      const last = events.at(-1)!;
      expect(last.startsWith('data: ')).toBe(true);
      expect(JSON.parse(last.slice('data: '.length)).error.message).toMatch(/over 4 MiB \(setting maxUpstreamEventBytes\)/);
      expect(text.length).toBeLessThan(6 * MiB);

      const anthropic = await post('/v1/messages', { model: 'openai/gpt-4o', max_tokens: 50, stream: true, messages: [{ role: 'user', content: 'hi' }] });
      expect(anthropic.status).toBe(200);
      const sse = await anthropic.text();
      expect(sse).toContain('"text":"Hello"');
      const error = sse.split('\n\n').find((e) => e.startsWith('event: error'))!;
      expect(error).toBeDefined();
      expect(JSON.parse(error.split('\n')[1]!.slice('data: '.length))).toMatchObject({ type: 'error', error: { message: expect.stringMatching(/over 4 MiB/) } });
    } finally {
      await router.manage('PATCH', '/api/settings', { maxUpstreamEventBytes: 16 * MiB });
    }
  }, 60_000);

  it('many small events that never bring content are bounded too (what is held before the commit)', async () => {
    expect((await router.manage('PATCH', '/api/settings', { maxUpstreamEventBytes: 1 * MiB })).status).toBe(200);
    try {
      mock.handle(() => ({
        type: 'custom',
        fn: async (_req, res) => {
          res.writeHead(200, { 'content-type': 'text/event-stream' });
          const empty = chunk({ content: '' }).repeat(1000);
          for (let i = 0; i < 2000 && !res.destroyed; i++) {
            if (!res.write(empty)) await drained(res);
          }
        },
      }));
      const res = await post('/v1/chat/completions', chat(true));
      expect(res.status).toBe(502);
      expect((await res.json()).error.message).toMatch(/over 1 MiB before any content/);
    } finally {
      await router.manage('PATCH', '/api/settings', { maxUpstreamEventBytes: 16 * MiB });
    }
  }, 60_000);
});

describe('a non-streaming upstream body over the reply cap (64 MiB)', () => {
  it('is a 502 with the standard body naming the limit', async () => {
    mock.handle(() => ({
      type: 'custom',
      fn: async (_req, res) => {
        res.writeHead(200, { 'content-type': 'application/json' });
        await writeWithoutNewline(res, 70 * MiB);
        res.end();
      },
    }));
    const res = await post('/v1/chat/completions', chat(false));
    expect(res.status).toBe(502);
    const body = await res.json();
    expect(body.error.message).toMatch(/exceeds 64 MiB/);
    expect(body.error.message).not.toMatch(/could not be reached/);
    const health = await fetch(`${router.url}/api/health`);
    expect(health.status).toBe(200);
  }, 60_000);
});
