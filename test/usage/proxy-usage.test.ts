/**
 * Usage rows through the real daemon and the mock upstreams: every client format, streamed and not,
 * records the token counts the upstream reported; a reply without usage gets an estimated row; the live
 * WebSocket sees each request; rows survive a graceful stop.
 */
import Database from 'better-sqlite3';
import { countTokens } from 'gpt-tokenizer';
import { join } from 'node:path';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'undici';
import { startMockUpstream, type MockUpstream } from '../mocks/upstream.js';
import { computeCost, DEFAULT_PRICES } from '../../src/daemon/usage/pricing.js';
import { eventually, spawnDaemon, type Daemon } from './helpers.js';

let mock: MockUpstream;
let router: Daemon;
let key: string;
let keyId: string;

beforeAll(async () => {
  mock = await startMockUpstream();
  router = await spawnDaemon();
  key = await router.createKey();
  keyId = (await router.manage('GET', '/api/keys')).json.keys[0].id;
  await router.addConnection({ provider: 'openai', apiKey: 'sk-up', providerSpecificData: { baseUrl: mock.openaiBase } });
  await router.addConnection({ provider: 'anthropic', apiKey: 'sk-ant-up', providerSpecificData: { baseUrl: mock.anthropicBase } });
  await router.addConnection({ provider: 'gemini', apiKey: 'gem-up', providerSpecificData: { baseUrl: mock.geminiBase } });
});
afterEach(() => mock.reset());
afterAll(async () => {
  await router?.stop();
  await mock?.close();
});

const auth = () => ({ authorization: `Bearer ${key}`, 'content-type': 'application/json' });

/** Sends a proxied call and reads the whole reply; returns the trace id and body. */
async function call(path: string, body: Record<string, unknown>, headers: Record<string, string> = {}): Promise<{ trace: string; text: string; status: number }> {
  const res = await fetch(`${router.url}${path}`, { method: 'POST', headers: { ...auth(), ...headers }, body: JSON.stringify(body) });
  const text = await res.text();
  expect(res.status, text).toBe(200);
  return { trace: res.headers.get('x-router-trace-id')!, text, status: res.status };
}

/** The request-log row of a trace (waits for streams and estimations to be recorded). */
async function rowOf(trace: string): Promise<any> {
  return eventually(async () => {
    const r = await router.manage('GET', '/api/logs?limit=500');
    return (r.json.logs as any[]).find((l) => l.traceId === trace);
  });
}

const chatBody = (model: string, stream: boolean, extra: Record<string, unknown> = {}) => ({
  model,
  messages: [{ role: 'user', content: 'How many tokens is this?' }],
  stream,
  ...extra,
});
const messagesBody = (model: string, stream: boolean) => ({ model, max_tokens: 100, messages: [{ role: 'user', content: 'Hello there' }], stream });
const responsesBody = (model: string, stream: boolean) => ({ model, input: 'Say hello', stream });
const geminiBody = { contents: [{ role: 'user', parts: [{ text: 'Hello Gemini' }] }] };

interface Case {
  name: string;
  path: string;
  body: Record<string, unknown>;
  provider: string;
  model: string;
  streamed: boolean;
}

const CASES: Case[] = [
  { name: 'chat -> openai', path: '/v1/chat/completions', body: chatBody('openai/gpt-4o', false), provider: 'openai', model: 'gpt-4o', streamed: false },
  {
    name: 'chat stream (include_usage) -> openai',
    path: '/v1/chat/completions',
    body: chatBody('openai/gpt-4o', true, { stream_options: { include_usage: true } }),
    provider: 'openai',
    model: 'gpt-4o',
    streamed: true,
  },
  { name: 'chat stream -> anthropic (translated)', path: '/v1/chat/completions', body: chatBody('anthropic/claude-haiku-4-5', true), provider: 'anthropic', model: 'claude-haiku-4-5', streamed: true },
  { name: 'messages -> anthropic', path: '/v1/messages', body: messagesBody('anthropic/claude-sonnet-4-5', false), provider: 'anthropic', model: 'claude-sonnet-4-5', streamed: false },
  { name: 'messages stream -> anthropic', path: '/v1/messages', body: messagesBody('anthropic/claude-sonnet-4-5', true), provider: 'anthropic', model: 'claude-sonnet-4-5', streamed: true },
  { name: 'messages stream -> gemini (translated)', path: '/v1/messages', body: messagesBody('gemini/gemini-2.5-flash', true), provider: 'gemini', model: 'gemini-2.5-flash', streamed: true },
  { name: 'responses -> openai', path: '/v1/responses', body: responsesBody('openai/gpt-4.1', false), provider: 'openai', model: 'gpt-4.1', streamed: false },
  { name: 'responses stream -> openai', path: '/v1/responses', body: responsesBody('openai/gpt-4.1', true), provider: 'openai', model: 'gpt-4.1', streamed: true },
  { name: 'responses -> anthropic (translated)', path: '/v1/responses', body: responsesBody('anthropic/claude-haiku-4-5', false), provider: 'anthropic', model: 'claude-haiku-4-5', streamed: false },
  {
    name: 'gemini generateContent -> gemini',
    path: '/v1beta/models/gemini/gemini-2.5-pro:generateContent',
    body: geminiBody,
    provider: 'gemini',
    model: 'gemini-2.5-pro',
    streamed: false,
  },
  {
    name: 'gemini streamGenerateContent -> gemini',
    path: '/v1beta/models/gemini/gemini-2.5-pro:streamGenerateContent?alt=sse',
    body: geminiBody,
    provider: 'gemini',
    model: 'gemini-2.5-pro',
    streamed: true,
  },
  {
    name: 'gemini generateContent -> openai (translated)',
    path: '/v1beta/models/openai/gpt-4o-mini:generateContent',
    body: geminiBody,
    provider: 'openai',
    model: 'gpt-4o-mini',
    streamed: false,
  },
];

describe('usage rows per client format', () => {
  it.each(CASES.map((c, i) => [c.name, c, i] as const))('%s records the tokens the upstream reported', async (_name, c, i) => {
    const inputTokens = 101 + i;
    const outputTokens = 17 + i;
    mock.handle(() => ({ type: 'text', text: 'Counted reply.', usage: { inputTokens, outputTokens } }));
    const { trace } = await call(c.path, c.body);
    const row = await rowOf(trace);
    expect(row).toMatchObject({
      traceId: trace,
      apiKeyId: keyId,
      provider: c.provider,
      model: c.model,
      status: 200,
      tokensIn: inputTokens,
      tokensOut: outputTokens,
      streamed: c.streamed,
      estimated: false,
      error: null,
    });
    expect(row.endpoint).toMatch(/^\/v1/);
    expect(row.latencyMs).toBeGreaterThan(0);
    expect(row.upstreamMs).toBeGreaterThan(0);
    const price = DEFAULT_PRICES[c.provider]![c.model]!;
    expect(row.costUsd).toBeCloseTo(computeCost(price, { inputTokens, outputTokens }), 12);
  });

  it('records cache reads and reasoning tokens, priced per kind', async () => {
    mock.handle(() => ({ type: 'text', usage: { inputTokens: 1000, outputTokens: 200, cachedTokens: 400, reasoningTokens: 50 } }));
    const { trace } = await call('/v1/chat/completions', chatBody('openai/gpt-4o', false));
    const row = await rowOf(trace);
    expect(row).toMatchObject({ tokensIn: 1000, tokensOut: 200, cacheReadTokens: 400, reasoningTokens: 50, cacheWriteTokens: 0 });
    // gpt-4o: input 2.5, cached 1.25, output 10 (reasoning billed as output).
    expect(row.costUsd).toBeCloseTo((600 * 2.5 + 400 * 1.25 + 150 * 10 + 50 * 10) / 1e6, 12);
  });

  it('estimates the input of a passthrough stream that reports no usage, and marks the row', async () => {
    const content = 'Please estimate the tokens of this prompt, which has no usage in its reply.';
    const { trace } = await call('/v1/chat/completions', { model: 'openai/gpt-4o', messages: [{ role: 'user', content }], stream: true });
    const row = await rowOf(trace);
    expect(row.estimated).toBe(true);
    expect(row.streamed).toBe(true);
    expect(row.tokensIn).toBe(countTokens(content) + 3);
    expect(row.costUsd).toBeCloseTo((row.tokensIn * 2.5 + row.tokensOut * 10) / 1e6, 12);
  });

  it('estimates the output of a long passthrough stream from all of its text', async () => {
    const text = Array.from({ length: 60 }, (_, i) => `Sentence number ${i} of a long streamed reply, with some words.`).join(' ');
    mock.handle(() => ({ type: 'text', text, chunks: 40 }));
    const res = await fetch(`${router.url}/v1/chat/completions`, { method: 'POST', headers: auth(), body: JSON.stringify(chatBody('openai/gpt-4o', true)) });
    const trace = res.headers.get('x-router-trace-id')!;
    await res.text();
    const row = await rowOf(trace);
    expect(row).toMatchObject({ estimated: true, streamed: true, finishReason: 'stop', status: 200 });
    expect(row.tokensOut).toBe(countTokens(text));
  });

  it('usage promised (include_usage) but never sent: text deltas forwarded unparsed still count in the estimate', async () => {
    const text = Array.from({ length: 60 }, (_, i) => `Sentence number ${i} of a long streamed reply, with some words.`).join(' ');
    const pieces = text.match(/.{1,40}/gs)!;
    // An upstream that ignores stream_options: content chunks (with usage: null), a finish, [DONE], no usage.
    mock.handle(() => ({
      type: 'custom',
      fn: (_req, res) => {
        const chunk = (delta: object, finish: string | null) =>
          `data: ${JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', created: 1, model: 'gpt-4o', choices: [{ index: 0, delta, finish_reason: finish }], usage: null })}\n\n`;
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.write(chunk({ role: 'assistant', content: '' }, null));
        for (const p of pieces) res.write(chunk({ content: p }, null));
        res.end(chunk({}, 'stop') + 'data: [DONE]\n\n');
      },
    }));
    const res = await fetch(`${router.url}/v1/chat/completions`, {
      method: 'POST',
      headers: auth(),
      body: JSON.stringify(chatBody('openai/gpt-4o', true, { stream_options: { include_usage: true } })),
    });
    const trace = res.headers.get('x-router-trace-id')!;
    const body = await res.text();
    // The client got every delta, in order.
    const got = body
      .split('\n')
      .filter((l) => l.startsWith('data: {'))
      .map((l) => JSON.parse(l.slice(6)).choices[0]?.delta?.content ?? '')
      .join('');
    expect(got).toBe(text);
    const row = await rowOf(trace);
    expect(row).toMatchObject({ estimated: true, streamed: true, finishReason: 'stop', status: 200 });
    // Text read back from unparsed deltas is counted after the parsed text (past the 16 KiB keep limit the
    // rest is parsed as usual), so words at the seams may tokenize differently: within 1 %.
    expect(Math.abs(row.tokensOut - countTokens(text))).toBeLessThanOrEqual(Math.ceil(countTokens(text) / 100));
    expect(row.estimated).toBe(true);
  });

  it('a long Anthropic passthrough stream reaches the client whole and keeps the upstream counts', async () => {
    const text = Array.from({ length: 40 }, (_, i) => `Line ${i} of an Anthropic reply.`).join(' ');
    mock.handle(() => ({ type: 'text', text, chunks: 30, usage: { inputTokens: 44, outputTokens: 55 } }));
    const res = await fetch(`${router.url}/v1/messages`, { method: 'POST', headers: auth(), body: JSON.stringify(messagesBody('anthropic/claude-sonnet-4-5', true)) });
    const trace = res.headers.get('x-router-trace-id')!;
    const body = await res.text();
    const got = body
      .split('\n')
      .filter((l) => l.startsWith('data: {'))
      .map((l) => JSON.parse(l.slice(6)))
      .filter((e) => e.type === 'content_block_delta')
      .map((e) => e.delta.text ?? '')
      .join('');
    expect(got).toBe(text);
    const row = await rowOf(trace);
    expect(row).toMatchObject({ estimated: false, streamed: true, tokensIn: 44, tokensOut: 55, finishReason: 'stop' });
  });

  it('a passthrough stream with usage and tool calls keeps its counts and tool_calls finish', async () => {
    mock.handle(() => ({ type: 'tool-calls', text: 'Let me look that up for you, one moment please.', calls: [{ name: 'lookup', arguments: { q: 'x' } }], chunks: 12, usage: { inputTokens: 31, outputTokens: 9 } }));
    const { trace } = await call('/v1/chat/completions', chatBody('openai/gpt-4o', true, { stream_options: { include_usage: true } }));
    const row = await rowOf(trace);
    expect(row).toMatchObject({ estimated: false, tokensIn: 31, tokensOut: 9, finishReason: 'tool_calls' });
  });

  it('records a failed attempt with its status and error', async () => {
    mock.handle(() => ({ type: 'status', status: 400, message: 'bad things' }));
    const res = await fetch(`${router.url}/v1/chat/completions`, { method: 'POST', headers: auth(), body: JSON.stringify(chatBody('openai/gpt-4o', false)) });
    expect(res.status).toBe(400);
    await res.text();
    const row = await eventually(async () => {
      const r = await router.manage('GET', '/api/logs?status=400');
      return r.json.logs[0];
    });
    expect(row).toMatchObject({ provider: 'openai', model: 'gpt-4o', status: 400, tokensIn: 0, costUsd: 0 });
    expect(row.error).toContain('bad things');
  });
});

describe('requests refused before any upstream attempt', () => {
  it('still get a row: the status the client got, the named provider and model (or `router`), no tokens', async () => {
    const hits = mock.requests.length;
    const unknown = await fetch(`${router.url}/v1/chat/completions`, { method: 'POST', headers: auth(), body: JSON.stringify(chatBody('nosuchprovider/x-1', false)) });
    const noConn = await fetch(`${router.url}/v1/messages`, { method: 'POST', headers: auth(), body: JSON.stringify(messagesBody('mistral/mistral-large-latest', false)) });
    expect([unknown.status, noConn.status]).toEqual([404, 400]);
    const [u, n] = [await unknown.json(), await noConn.json()];
    expect(mock.requests.length).toBe(hits);
    const rows = await eventually(async () => {
      const r = await router.manage('GET', '/api/logs?limit=50');
      const got = r.json.logs.filter((l: any) => l.status === 404 || (l.status === 400 && l.provider === 'mistral'));
      return got.length >= 2 ? got : undefined;
    });
    const r404 = rows.find((l: any) => l.status === 404);
    expect(r404).toMatchObject({ provider: 'router', model: 'nosuchprovider/x-1', apiKeyId: keyId, endpoint: '/v1/chat/completions', tokensIn: 0, tokensOut: 0, costUsd: 0, upstreamMs: null });
    expect(r404.error).toContain(u.error.message.slice(0, 30));
    const r400 = rows.find((l: any) => l.status === 400);
    expect(r400).toMatchObject({ provider: 'mistral', model: 'mistral-large-latest', endpoint: '/v1/messages', tokensIn: 0, costUsd: 0 });
    expect(r400.error).toContain(n.error.message.slice(0, 30));
  });
});

describe('live WebSocket', () => {
  it('sends a status message on connect and a request message after a proxied call', async () => {
    const ws = new WebSocket(`ws://127.0.0.1:${router.port}/api/live`, { headers: { 'x-router-cli-token': router.cliToken } } as never);
    const messages: any[] = [];
    const waiters: Array<{ pred: (m: any) => boolean; resolve: (m: any) => void }> = [];
    ws.addEventListener('message', (ev) => {
      const m = JSON.parse(String(ev.data));
      const w = waiters.findIndex((x) => x.pred(m));
      if (w >= 0) waiters.splice(w, 1)[0]!.resolve(m);
      else messages.push(m);
    });
    const next = (pred: (m: any) => boolean) =>
      new Promise<any>((resolve, reject) => {
        const i = messages.findIndex(pred);
        if (i >= 0) return resolve(messages.splice(i, 1)[0]);
        const t = setTimeout(() => reject(new Error('timeout')), 5_000);
        waiters.push({ pred, resolve: (m) => (clearTimeout(t), resolve(m)) });
      });
    await new Promise<void>((resolve, reject) => {
      ws.addEventListener('open', () => resolve());
      ws.addEventListener('error', () => reject(new Error('ws error')));
    });
    const status = await next((m) => m.type === 'status');
    expect(status).toMatchObject({ type: 'status', liveClients: 1 });
    expect(status.uptimeSeconds).toBeGreaterThanOrEqual(0);
    expect(typeof status.requestsPerSecond).toBe('number');
    expect(typeof status.openStreams).toBe('number');

    mock.handle(() => ({ type: 'text', usage: { inputTokens: 7, outputTokens: 3 } }));
    const { trace } = await call('/v1/chat/completions', chatBody('openai/gpt-4o-mini', false));
    const msg = await next((m) => m.type === 'request' && m.traceId === trace);
    expect(msg).toMatchObject({ type: 'request', provider: 'openai', model: 'gpt-4o-mini', status: 200, tokensIn: 7, tokensOut: 3, apiKeyId: keyId });
    expect(typeof msg.timestamp).toBe('string');
    ws.close();
  });
});

describe('graceful stop', () => {
  it('writes queued usage rows before exiting', async () => {
    const home = mkdtempSync(join(tmpdir(), 'router-usage-stop-'));
    try {
      const d = await spawnDaemon({ home });
      const k = await d.createKey();
      await d.addConnection({ provider: 'openai', apiKey: 'sk-up', providerSpecificData: { baseUrl: mock.openaiBase } });
      const N = 12;
      await Promise.all(
        Array.from({ length: N }, (_, i) =>
          fetch(`${d.url}/v1/chat/completions`, {
            method: 'POST',
            headers: { authorization: `Bearer ${k}`, 'content-type': 'application/json' },
            body: JSON.stringify(chatBody('openai/gpt-4o', i % 2 === 0, i % 2 === 0 ? { stream_options: { include_usage: true } } : {})),
          }).then((r) => r.text()),
        ),
      );
      // Stop at once: the rows are still in the in-memory queue (flushed every second).
      await d.stop();
      const db = new Database(join(home, 'router.db'), { readonly: true });
      try {
        const n = db.prepare('SELECT COUNT(*) AS n FROM usage_log').get() as { n: number };
        expect(n.n).toBe(N);
        const tokens = db.prepare('SELECT MIN(tokens_in) AS min FROM usage_log').get() as { min: number };
        expect(tokens.min).toBeGreaterThan(0);
      } finally {
        db.close();
      }
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
  });

  it('waits for the writer worker: rows it was handed and rows still queued are all stored', async () => {
    const home = mkdtempSync(join(tmpdir(), 'router-usage-stop-worker-'));
    try {
      const d = await spawnDaemon({ home });
      const k = await d.createKey();
      await d.addConnection({ provider: 'openai', apiKey: 'sk-up', providerSpecificData: { baseUrl: mock.openaiBase } });
      const send = (n: number) =>
        Promise.all(
          Array.from({ length: n }, () =>
            fetch(`${d.url}/v1/chat/completions`, {
              method: 'POST',
              headers: { authorization: `Bearer ${k}`, 'content-type': 'application/json' },
              body: JSON.stringify(chatBody('openai/gpt-4o', false)),
            }).then((r) => r.text()),
          ),
        );
      await send(5);
      // An analytics read hands the queue to the writer worker (the daemon runs the compiled one).
      const t = await d.manage('GET', '/api/telemetry/summary');
      expect(t.json.recorder).toMatchObject({ writer: 'worker', written: 5, queued: 0 });
      await send(7);
      await d.stop();
      const db = new Database(join(home, 'router.db'), { readonly: true });
      try {
        expect((db.prepare('SELECT COUNT(*) AS n FROM usage_log').get() as { n: number }).n).toBe(12);
      } finally {
        db.close();
      }
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
  });
});
