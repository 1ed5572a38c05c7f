/**
 * The Responses API over WebSocket (GET /v1/responses, Upgrade: websocket) through the real daemon against
 * mock upstreams: the official `openai` SDK's ResponsesWS with several responses on one socket, a tool
 * call round trip translated to Anthropic, previous_response_id passed to a Responses upstream, a failure
 * that ends in response.failed and leaves the socket usable, one usage row per response; and with a plain
 * WebSocket client (undici) or a raw upgrade: key and scope checks, a foreign Origin refused, an oversized
 * frame closed with 1009 (one byte over the limit; the limit itself passes), a frame that is not JSON answered
 * with an error event, an idle socket closed after `responsesSocketIdleMs` (frames and responses in progress
 * reset it).
 */
import { request as httpRequest } from 'node:http';
import { randomBytes } from 'node:crypto';
import OpenAI from 'openai';
import { ResponsesWS } from 'openai/resources/responses/ws';
import { WebSocket } from 'undici';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startMockUpstream, type MockUpstream } from '../mocks/upstream.js';
import { startRouter, type RouterProcess } from '../support/router-daemon.js';
import { eventually } from '../usage/helpers.js';

let mock: MockUpstream;
let router: RouterProcess;
let key: string;

beforeAll(async () => {
  mock = await startMockUpstream();
  router = await startRouter();
  key = await router.createKey();
  await router.addConnection({ provider: 'openai', apiKey: 'sk-up', providerSpecificData: { baseUrl: mock.openaiBase } });
  await router.addConnection({ provider: 'anthropic', apiKey: 'sk-ant-up', providerSpecificData: { baseUrl: mock.anthropicBase } });
});
afterEach(() => mock.reset());
afterAll(async () => {
  await router?.stop();
  await mock?.close();
});

/** A socket of the official SDK and the server events it received, read one response at a time. */
async function sdkSocket(apiKey = key) {
  const client = new OpenAI({ apiKey, baseURL: `${router.url}/v1` });
  const ws = new ResponsesWS(client);
  const events: any[] = [];
  let wake: (() => void) | undefined;
  ws.on('event', (e) => {
    events.push(e);
    wake?.();
  });
  ws.on('error', () => {
    // errors arrive as `error` events in `events` too; the SDK also emits them here
  });
  /** Sends one response.create and resolves with its events, up to and including the terminal one. */
  async function create(body: Record<string, unknown>): Promise<any[]> {
    const start = events.length;
    ws.send({ type: 'response.create', ...body } as any);
    for (;;) {
      const done = events.slice(start).findIndex((e) => ['response.completed', 'response.failed', 'response.incomplete'].includes(e.type));
      if (done >= 0) return events.slice(start, start + done + 1);
      await new Promise<void>((resolve, reject) => {
        const t = setTimeout(() => reject(new Error(`no terminal event; got ${events.slice(start).map((e) => e.type).join(', ')}`)), 10_000);
        wake = () => {
          clearTimeout(t);
          resolve();
        };
      });
    }
  }
  return { ws, create, events };
}

function outputText(events: any[]): string {
  return events.filter((e) => e.type === 'response.output_text.delta').map((e) => e.delta).join('');
}

async function rowsFor(count: number): Promise<any[]> {
  return eventually(async () => {
    const r = await router.manage('GET', '/api/logs?limit=500');
    const rows = (r.json.logs as any[]).filter((l) => l.endpoint === '/v1/responses');
    return rows.length >= count ? rows : undefined;
  });
}

/** A raw upgrade request: the status the daemon answered (101 when it upgraded). */
function upgradeStatus(headers: Record<string, string>): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(`${router.url}/v1/responses`, {
      headers: { connection: 'Upgrade', upgrade: 'websocket', 'sec-websocket-version': '13', 'sec-websocket-key': randomBytes(16).toString('base64'), ...headers },
    });
    req.on('upgrade', (_res, socket) => {
      socket.destroy();
      resolve({ status: 101, body: '' });
    });
    req.on('response', (res) => {
      let body = '';
      res.on('data', (c) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

/** A plain WebSocket (undici) with the given headers: its frames and how it closed. */
function plainSocket(headers: Record<string, string>) {
  const ws = new WebSocket(`${router.url.replace('http', 'ws')}/v1/responses`, { headers } as any);
  const frames: any[] = [];
  const opened = new Promise<void>((resolve, reject) => {
    ws.addEventListener('open', () => resolve());
    ws.addEventListener('error', () => reject(new Error('websocket error')));
  });
  const closed = new Promise<{ code: number; reason: string }>((resolve) => ws.addEventListener('close', (e) => resolve({ code: e.code, reason: e.reason })));
  ws.addEventListener('message', (e) => frames.push(JSON.parse(String(e.data))));
  return { ws, frames, opened, closed };
}

describe('Responses over WebSocket', () => {
  it('serves several responses on one socket with the official SDK, each its own usage row', async () => {
    const s = await sdkSocket();
    try {
      mock.handle((req) => (req.endpoint === 'openai.responses' ? { type: 'text', text: `Reply ${req.index}.`, usage: { inputTokens: 11, outputTokens: 3 } } : undefined));
      const first = await s.create({ model: 'openai/gpt-4o', input: 'Hello?' });
      expect(first[0].type).toBe('response.created');
      expect(first.at(-1).type).toBe('response.completed');
      expect(outputText(first)).toBe('Reply 0.');
      const second = await s.create({ model: 'openai/gpt-4o', input: 'Again?' });
      expect(outputText(second)).toBe('Reply 1.');
      expect(second.at(-1).response.id).not.toBe(first.at(-1).response.id);
      // Streamed upstream (stream: true is implicit on this transport), one request per response.
      expect(mock.requests.map((r) => [r.endpoint, r.stream])).toEqual([['openai.responses', true], ['openai.responses', true]]);
      const rows = await rowsFor(2);
      expect(new Set(rows.map((r) => r.traceId)).size).toBe(rows.length);
      expect(rows.slice(0, 2).every((r) => r.status === 200 && r.streamed && r.tokensIn === 11 && r.tokensOut === 3)).toBe(true);
      expect(rows.slice(0, 2).every((r) => JSON.parse(r.notes).transport === 'websocket')).toBe(true);
    } finally {
      s.ws.close();
    }
  });

  it('does a tool call round trip translated to Anthropic; previous_response_id chained on the socket or passed to a Responses upstream', async () => {
    const s = await sdkSocket();
    try {
      mock.enqueue({ type: 'tool-calls', calls: [{ name: 'get_weather', arguments: { city: 'Paris' }, id: 'toolu_01' }] }, { type: 'text', text: 'Sunny in Paris.' });
      const tools = [{ type: 'function', name: 'get_weather', description: 'Weather of a city', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } }];
      const first = await s.create({ model: 'anthropic/claude-sonnet-4-5', input: 'Weather in Paris?', tools });
      expect(first.at(-1).type).toBe('response.completed');
      const call = first.at(-1).response.output.find((o: any) => o.type === 'function_call');
      expect(call).toMatchObject({ name: 'get_weather', call_id: 'toolu_01' });
      expect(JSON.parse(call.arguments)).toEqual({ city: 'Paris' });
      const second = await s.create({
        model: 'anthropic/claude-sonnet-4-5',
        tools,
        input: [
          { role: 'user', content: 'Weather in Paris?' },
          { type: 'function_call', call_id: call.call_id, name: call.name, arguments: call.arguments },
          { type: 'function_call_output', call_id: call.call_id, output: '{"sky": "sunny"}' },
        ],
      });
      expect(outputText(second)).toBe('Sunny in Paris.');
      const upstream = mock.requests.filter((r) => r.endpoint === 'anthropic.messages');
      expect(upstream).toHaveLength(2);
      const toolResult = upstream[1]!.json.messages.flatMap((m: any) => (Array.isArray(m.content) ? m.content : [])).find((c: any) => c.type === 'tool_result');
      expect(toolResult).toMatchObject({ tool_use_id: 'toolu_01' });

      const chained = await s.create({ model: 'openai/gpt-4o', input: 'And tomorrow?', previous_response_id: 'resp_prev_1' });
      expect(chained.at(-1).type).toBe('response.completed');
      expect(mock.requests.at(-1)!.json.previous_response_id).toBe('resp_prev_1');
      // A response of this socket is chained by router itself, whatever the upstream: its conversation
      // (input and output items) is sent with the new input, as OpenAI's WebSocket mode keeps it on the socket.
      const turn = await s.create({ model: 'anthropic/claude-sonnet-4-5', input: 'And tomorrow?', previous_response_id: second.at(-1).response.id });
      expect(turn.at(-1).type).toBe('response.completed');
      const sent = mock.requests.at(-1)!.json;
      expect(sent.messages.map((m: any) => m.role)).toEqual(['user', 'assistant', 'user', 'assistant', 'user']);
      expect(JSON.stringify(sent.messages)).toContain('Sunny in Paris.');
      expect(JSON.stringify(sent.messages.at(-1).content)).toContain('And tomorrow?');
      // An id this socket did not serve: Anthropic keeps no state, so refused (400), never dropped.
      const refused = await s.create({ model: 'anthropic/claude-sonnet-4-5', input: 'And tomorrow?', previous_response_id: 'resp_prev_1' });
      expect(refused.map((e) => e.type)).toEqual(['error', 'response.failed']);
    } finally {
      s.ws.close();
    }
  });

  it('ends a failed response with response.failed and keeps serving the socket; an upstream stream cut short too', async () => {
    const s = await sdkSocket();
    try {
      mock.enqueue({ type: 'status', status: 500 });
      const failed = await s.create({ model: 'openai/gpt-4o', input: 'Hi' });
      expect(failed.map((e) => e.type)).toEqual(['error', 'response.failed']);
      expect(failed[1].response.status).toBe('failed');
      expect(failed[1].response.error.message).toMatch(/server had an error/i);
      mock.enqueue({ type: 'stream-error', afterChunks: 3, status: 500, message: 'upstream broke' });
      const broken = await s.create({ model: 'openai/gpt-4o', input: 'Hi' });
      expect(broken.at(-1).type).toBe('response.failed');
      const ok = await s.create({ model: 'openai/gpt-4o', input: 'Hi' });
      expect(ok.at(-1).type).toBe('response.completed');
      const unknown = await s.create({ model: 'nope/unknown', input: 'Hi' });
      expect(unknown.map((e) => e.type)).toEqual(['error', 'response.failed']);
      expect(unknown[1].response.error.code).toBe('model_not_found');
    } finally {
      s.ws.close();
    }
  });

  it('authenticates the upgrade like HTTP: no key 401, key scopes per response', async () => {
    expect((await upgradeStatus({})).status).toBe(401);
    expect((await upgradeStatus({ authorization: 'Bearer rk_wrong' })).status).toBe(401);
    expect((await upgradeStatus({ authorization: `Bearer ${key}` })).status).toBe(101);
    const manageOnly = await router.createKey(['manage']);
    expect((await upgradeStatus({ authorization: `Bearer ${manageOnly}` })).status).toBe(403);
    const scoped = await router.createKey(['model:openai/*']);
    const s = await sdkSocket(scoped);
    try {
      const refused = await s.create({ model: 'anthropic/claude-sonnet-4-5', input: 'Hi' });
      expect(refused.map((e) => e.type)).toEqual(['error', 'response.failed']);
      expect(refused[0].code).toBe('model_not_allowed');
      expect((await s.create({ model: 'openai/gpt-4o', input: 'Hi' })).at(-1).type).toBe('response.completed');
    } finally {
      s.ws.close();
    }
    // The key is read again for each response: disabled mid-socket, the next response fails and the socket closes.
    const created = await router.manage('POST', '/api/keys', { name: 'late', scopes: ['proxy'] });
    const late = created.json.key as string;
    const lateId = created.json.id as string;
    const t = await sdkSocket(late);
    const closed = new Promise<number>((resolve) => t.ws.on('close', (code) => resolve(code)));
    expect((await t.create({ model: 'openai/gpt-4o', input: 'Hi' })).at(-1).type).toBe('response.completed');
    expect((await router.manage('PATCH', `/api/keys/${lateId}`, { isActive: false })).status).toBe(200);
    const revoked = await t.create({ model: 'openai/gpt-4o', input: 'Hi' });
    expect(revoked.map((e) => e.type)).toEqual(['error', 'response.failed']);
    expect(revoked[0].code).toBe('unauthorized');
    expect(await closed).toBe(1008);
    // A plain GET without the upgrade is told what this path is.
    const plain = await fetch(`${router.url}/v1/responses`, { headers: { authorization: `Bearer ${key}` } });
    expect(plain.status).toBe(426);
  });

  it('closes open sockets with 1001 when the daemon stops, without holding the stop', async () => {
    const other = await startRouter();
    try {
      const k = await other.createKey();
      const ws = new WebSocket(`${other.url.replace('http', 'ws')}/v1/responses`, { headers: { authorization: `Bearer ${k}` } } as any);
      await new Promise((resolve) => ws.addEventListener('open', resolve));
      const closed = new Promise<number>((resolve) => ws.addEventListener('close', (e) => resolve(e.code)));
      const t0 = Date.now();
      await other.stop();
      expect(await closed).toBe(1001);
      expect(Date.now() - t0).toBeLessThan(5_000);
    } catch (err) {
      await other.stop().catch(() => undefined);
      throw err;
    }
  });

  it('refuses a foreign Origin (403) and accepts router’s own', async () => {
    const foreign = await upgradeStatus({ authorization: `Bearer ${key}`, origin: 'https://evil.example' });
    expect(foreign.status).toBe(403);
    expect(JSON.parse(foreign.body).error.message).toMatch(/Origin/);
    expect((await upgradeStatus({ authorization: `Bearer ${key}`, origin: router.url })).status).toBe(101);
  });

  it('closes an idle socket after responsesSocketIdleMs with 1000 "idle timeout"; a frame either way or a response in progress resets it', async () => {
    expect((await router.manage('GET', '/api/settings')).json.responsesSocketIdleMs).toBe(600_000);
    for (const bad of [999, 1500.5, '2000', 86_400_001]) {
      expect((await router.manage('PATCH', '/api/settings', { responsesSocketIdleMs: bad })).status, String(bad)).toBe(400);
    }
    expect((await router.manage('PATCH', '/api/settings', { responsesSocketIdleMs: 1500 })).status).toBe(200);
    const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
    try {
      // Left alone: closed about 1.5 s after it opened.
      const quiet = plainSocket({ authorization: `Bearer ${key}` });
      await quiet.opened;
      const t0 = Date.now();
      const closedQuiet = await quiet.closed;
      expect(closedQuiet).toEqual({ code: 1000, reason: 'idle timeout' });
      expect(Date.now() - t0).toBeGreaterThanOrEqual(1400);
      expect(Date.now() - t0).toBeLessThan(4000);

      // A message at 1 s moves the deadline: still open at 2 s, closed about 1.5 s after that message.
      const active = plainSocket({ authorization: `Bearer ${key}` });
      await active.opened;
      let closedAt = 0;
      void active.closed.then(() => (closedAt = Date.now()));
      await sleep(1000);
      active.ws.send('not json');
      const sentAt = Date.now();
      await sleep(1000);
      expect(closedAt, 'closed before its new deadline').toBe(0);
      expect(await active.closed).toEqual({ code: 1000, reason: 'idle timeout' });
      expect(closedAt - sentAt).toBeGreaterThanOrEqual(1400);

      // A response that takes longer than the idle time keeps the socket open; idle counts from its last frame.
      mock.handle((req) => (req.endpoint === 'openai.responses' ? { type: 'delay', ms: 2500, then: { type: 'text', text: 'late' } } : undefined));
      const busy = plainSocket({ authorization: `Bearer ${key}` });
      await busy.opened;
      busy.ws.send(JSON.stringify({ type: 'response.create', model: 'openai/gpt-4o', input: 'slow' }));
      const done = await eventually(() => busy.frames.find((f) => f.type === 'response.completed'), 10_000);
      const doneAt = Date.now();
      expect(done.response.status).toBe('completed');
      expect(await busy.closed).toEqual({ code: 1000, reason: 'idle timeout' });
      expect(Date.now() - doneAt).toBeGreaterThanOrEqual(1300);
    } finally {
      await router.manage('PATCH', '/api/settings', { responsesSocketIdleMs: 600_000 });
    }
  }, 30_000);

  it('takes a frame of exactly maxRequestBodyBytes and closes the socket on one byte more (1009)', async () => {
    expect((await router.manage('PATCH', '/api/settings', { maxRequestBodyBytes: 4096 })).status).toBe(200);
    try {
      const frame = (bytes: number) => {
        const base = JSON.stringify({ type: 'response.create', model: 'openai/gpt-4o', input: '' });
        return base.replace('"input":""', `"input":"${'y'.repeat(bytes - Buffer.byteLength(base))}"`);
      };
      expect(Buffer.byteLength(frame(4096))).toBe(4096);
      const s = plainSocket({ authorization: `Bearer ${key}` });
      await s.opened;
      s.ws.send(frame(4096));
      expect((await eventually(() => s.frames.find((f) => f.type === 'response.completed'))).type).toBe('response.completed');
      expect(mock.requests).toHaveLength(1);
      s.ws.send(frame(4097));
      expect((await s.closed).code).toBe(1009);
      expect(mock.requests).toHaveLength(1);
    } finally {
      await router.manage('PATCH', '/api/settings', { maxRequestBodyBytes: 32 * 1024 * 1024 });
    }
  });

  it('closes a socket that sends a frame over the body limit (1009); a frame that is not JSON gets an error event', async () => {
    const s = plainSocket({ authorization: `Bearer ${key}` });
    await s.opened;
    s.ws.send('not json');
    await eventually(() => (s.frames.length ? true : undefined));
    expect(s.frames[0]).toMatchObject({ type: 'error', status: 400, error: { code: 'invalid_json' } });
    s.ws.send(JSON.stringify({ type: 'session.update' }));
    await eventually(() => (s.frames.length > 1 ? true : undefined));
    expect(s.frames[1].error.code).toBe('unknown_event_type');
    expect((await router.manage('PATCH', '/api/settings', { maxRequestBodyBytes: 4096 })).status).toBe(200);
    try {
      s.ws.send(JSON.stringify({ type: 'response.create', model: 'openai/gpt-4o', input: 'x'.repeat(5000) }));
      const closed = await s.closed;
      expect(closed.code).toBe(1009);
      expect(mock.requests).toHaveLength(0);
    } finally {
      await router.manage('PATCH', '/api/settings', { maxRequestBodyBytes: 32 * 1024 * 1024 });
    }
  });
});
