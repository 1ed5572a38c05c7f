/**
 * Chat on the endpoint-family contract (issue 28 item 1): every outcome of a chat request is recorded once,
 * by the request's Reply (proxy/reply.ts): served (JSON and stream, recorded fixtures replayed), answered
 * from the response cache, refused before any attempt, a failed attempt followed by the next target, and a
 * stream broken after its commit. In-process daemon (real SQLite, real loopback HTTP to the mock upstream);
 * each usage row the recorder gets is counted per trace id with the place that recorded it.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { bootServices, buildApp, closeServices } from '../../src/daemon/boot.js';
import type { Outcome } from '../../src/daemon/proxy/outcome.js';
import type { Services } from '../../src/daemon/services.js';
import { startMockUpstream, type MockUpstream } from '../mocks/upstream.js';

let home: string;
let services: Services;
let app: ReturnType<typeof buildApp>;
let mock: MockUpstream;
let key: string;
/** Every outcome handed to the usage recorder, with whether Reply recorded it. */
const seen: { outcome: Outcome; viaReply: boolean }[] = [];

beforeAll(async () => {
  mock = await startMockUpstream();
  home = mkdtempSync(join(tmpdir(), 'router-outcomes-'));
  services = await bootServices({ home, host: '127.0.0.1', port: 0 });
  app = buildApp(services);
  key = (await services.keys.create('caller', ['proxy'])).key;
  const record = services.usage.recordOutcome.bind(services.usage);
  services.usage.recordOutcome = (o: Outcome) => {
    // The frame right above the recorder's hook (outcome.ts recordOutcome) names who recorded it.
    const stack = new Error().stack ?? '';
    seen.push({ outcome: { ...o }, viaReply: /proxy[\\/]reply\.(ts|js)/.test(stack.split('\n').slice(3, 5).join('\n')) });
    record(o);
  };
  for (const provider of ['openai', 'groq']) {
    const r = await send('POST', '/api/providers', { provider, apiKey: `sk-${provider}`, providerSpecificData: { baseUrl: mock.openaiBase } }, { 'x-router-cli-token': services.cliToken });
    expect(r.status, r.text).toBe(201);
  }
  const c = await send('POST', '/api/combos', { name: 'pair', models: ['openai/a', 'groq/b'] }, { 'x-router-cli-token': services.cliToken });
  expect(c.status, c.text).toBe(201);
  services.settings.update({ cacheEnabled: true });
});
afterEach(() => mock.reset());
afterAll(async () => {
  if (services) closeServices(services);
  if (home) rmSync(home, { recursive: true, force: true });
  await mock?.close();
});

async function send(method: string, path: string, body: unknown, headers: Record<string, string> = {}) {
  const res = await app.request(
    `http://router.test${path}`,
    { method, headers: { 'content-type': 'application/json', ...headers }, body: body === undefined ? undefined : JSON.stringify(body) },
    { remoteAddress: '127.0.0.1' },
  );
  const text = await res.text();
  return { status: res.status, text, headers: res.headers };
}

const chat = (body: Record<string, unknown>, headers: Record<string, string> = {}) =>
  send('POST', '/v1/chat/completions', { messages: [{ role: 'user', content: 'Say hello.' }], ...body }, { authorization: `Bearer ${key}`, 'user-agent': 'outcomes-test/1', ...headers });

/** The outcomes of one request, once the recorder had time to get late ones (a stream's end). */
async function outcomesOf(traceId: string | null, count: number): Promise<{ outcome: Outcome; viaReply: boolean }[]> {
  expect(traceId).toBeTruthy();
  const deadline = Date.now() + 5000;
  for (;;) {
    const mine = seen.filter((s) => s.outcome.traceId === traceId);
    if (mine.length >= count || Date.now() > deadline) {
      // Nothing more comes after a short wait: each outcome is recorded once.
      await new Promise((r) => setTimeout(r, 100));
      return seen.filter((s) => s.outcome.traceId === traceId);
    }
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('chat outcomes, recorded once each by Reply', () => {
  it('served: a JSON reply (recorded fixture) is one row with its usage', async () => {
    mock.handle(() => ({ type: 'replay', file: 'openai/chat-basic.yaml' }));
    const r = await chat({ model: 'openai/gpt-4o-mini' });
    expect(r.status, r.text).toBe(200);
    const rows = await outcomesOf(r.headers.get('x-router-trace-id'), 1);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ viaReply: true, outcome: { status: 200, streamed: false } });
    expect(rows[0]!.outcome.usage?.outputTokens).toBeGreaterThan(0);
  });

  it('served: a stream (recorded fixture) is one row when it ends, marked streamed', async () => {
    mock.handle(() => ({ type: 'replay', file: 'openai/chat-streaming.yaml' }));
    const r = await chat({ model: 'openai/gpt-4o-mini', stream: true, stream_options: { include_usage: true } });
    expect(r.status, r.text).toBe(200);
    expect(r.text).toContain('data: [DONE]');
    const rows = await outcomesOf(r.headers.get('x-router-trace-id'), 1);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ viaReply: true, outcome: { status: 200, streamed: true, error: undefined } });
  });

  it('cached: a response-cache hit is one row, no account, no upstream time, with the client and combo of the request', async () => {
    mock.enqueue({ type: 'text', text: 'Paris.' }, { type: 'text', text: 'Lyon.' });
    const first = await chat({ model: 'pair' }, { 'x-router-cache': 'use' });
    expect(first.headers.get('x-router-cache')).toBe('miss');
    const hit = await chat({ model: 'pair' }, { 'x-router-cache': 'use' });
    expect(hit.headers.get('x-router-cache')).toBe('hit');
    expect(hit.headers.get('server-timing')).toMatch(/^router;dur=[\d.]+, upstream;dur=0\.00$/);
    expect(mock.requests).toHaveLength(1);
    const rows = await outcomesOf(hit.headers.get('x-router-trace-id'), 1);
    expect(rows).toHaveLength(1);
    const { outcome, viaReply } = rows[0]!;
    expect(viaReply).toBe(true);
    expect(outcome).toMatchObject({ status: 200, upstreamMs: 0, cacheHit: true, combo: 'pair', client: { userAgent: 'outcomes-test/1' } });
    expect(outcome.target.connectionId).toBeUndefined();
  });

  it('refused early: an unknown model is one row with the status the client got, no attempt made', async () => {
    const r = await chat({ model: 'nosuch/model' });
    expect(r.status).toBeGreaterThanOrEqual(400);
    expect(r.status).toBeLessThan(500);
    const rows = await outcomesOf(r.headers.get('x-router-trace-id'), 1);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ viaReply: true, outcome: { status: r.status } });
    expect(mock.requests).toHaveLength(0);
  });

  it('a failed attempt and the target that served after it: one row each', async () => {
    mock.handle((req) => (req.model === 'a' ? { type: 'status', status: 503, message: 'overloaded' } : { type: 'text', text: 'from b' }));
    const r = await chat({ model: 'pair' });
    expect(r.status, r.text).toBe(200);
    const rows = await outcomesOf(r.headers.get('x-router-trace-id'), 2);
    expect(rows.map((x) => [x.outcome.target.model, x.outcome.status, x.viaReply])).toEqual([
      ['a', 503, true],
      ['b', 200, true],
    ]);
  });

  it('broken after commit: a stream cut mid-way is one row, served with its error, and counts against the provider', async () => {
    mock.handle(() => ({ type: 'drop-mid-stream', afterChunks: 2, then: { type: 'text', text: 'one two three four five six', chunks: 6 } }));
    services.resilience.breakers.reset();
    const r = await chat({ model: 'openai/gpt-4o-mini', stream: true });
    expect(r.status).toBe(200);
    expect(r.text).toContain('"error"');
    const rows = await outcomesOf(r.headers.get('x-router-trace-id'), 1);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ viaReply: true, outcome: { status: 200, streamed: true } });
    expect(rows[0]!.outcome.error).toBeTruthy();
    expect(services.resilience.breakers.entry('openai')?.consecutiveFailures).toBe(1);
  });
});

describe('one place records the proxy outcomes', () => {
  it('no source file of the daemon hands an outcome to the usage recorder but proxy/reply.ts (and provider batch lines)', () => {
    const root = join(__dirname, '../../src/daemon');
    // Importing the proxy's hook, or calling the usage recorder's.
    const HANDS_OVER = /import [^;]*\brecordOutcome\b[^;]*from '[./a-z]*outcome\.js'|usage\.recordOutcome\(/;
    const callers: string[] = [];
    const walk = (dir: string) => {
      for (const name of readdirSync(dir)) {
        const path = join(dir, name);
        if (statSync(path).isDirectory()) walk(path);
        else if (name.endsWith('.ts') && HANDS_OVER.test(readFileSync(path, 'utf8'))) callers.push(path.slice(root.length + 1).replace(/\\/g, '/'));
      }
    };
    walk(root);
    // outcome.ts is the hook itself; batches/native.ts records the per-line rows of a provider's own batch
    // results (no attempt of router's: the provider ran them).
    expect(callers.sort()).toEqual(['batches/native.ts', 'proxy/outcome.ts', 'proxy/reply.ts']);
  });
});
