/**
 * Recovery mid-stream (issue 30 item 3). Under a combo's `midStreamRecovery: "continue"`, a stream cut after
 * a few chunks goes on with the next target (the partial answer as the assistant's prefix: a prefill for an
 * Anthropic upstream, an explicit continuation message for an OpenAI one) in the same client stream, which
 * ends with one finish; official OpenAI (Chat Completions, Responses) and Anthropic SDK clients read one
 * seamless reply. Under `"error"`, a stalled stream ends with the client format's own error event (Chat
 * Completions, Anthropic, Responses, Gemini) instead of hanging. Real daemon, mock upstream that cuts or
 * stalls a stream after N chunks.
 */
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { CONTINUE_PROMPT } from '../../src/daemon/proxy/recovery.js';
import type { MockRequest } from '../mocks/types.js';
import { clearResilience, combo, settings, setup, type Env } from '../resilience/helpers.js';

const FULL = { type: 'text' as const, text: 'one two three four five six seven eight', chunks: 8 };
const REST = 'and the rest.';

let env: Env;
let openai: OpenAI;
let anthropic: Anthropic;

beforeAll(async () => {
  env = await setup({ providers: ['openai', 'groq'] });
  await env.router.addConnection({ provider: 'anthropic', apiKey: 'sk-ant-mid', providerSpecificData: { baseUrl: env.mock.anthropicBase } });
  await settings(env, { streamStallTimeoutMs: 1000 });
  await combo(env, { name: 'cont', models: ['openai/cut', 'groq/rest'], midStreamRecovery: 'continue' });
  await combo(env, { name: 'cont-anth', models: ['anthropic/cut-a', 'anthropic/rest-a'], midStreamRecovery: 'continue' });
  await combo(env, { name: 'cont-tool', models: ['openai/cut-tool', 'groq/rest'], midStreamRecovery: 'continue' });
  await combo(env, { name: 'err', models: ['openai/stall', 'groq/rest'], midStreamRecovery: 'error' });
  openai = new OpenAI({ baseURL: `${env.router.url}/v1`, apiKey: env.key, maxRetries: 0 });
  anthropic = new Anthropic({ baseURL: env.router.url, apiKey: env.key, maxRetries: 0 });
}, 60_000);

afterAll(async () => {
  await env?.stop();
});

beforeEach(async () => {
  env.mock.reset();
  await clearResilience(env);
  env.mock.handle((req) => {
    switch (req.model) {
      case 'cut':
      case 'cut-a':
        return { type: 'drop-mid-stream', afterChunks: frames(req), then: FULL };
      case 'cut-tool':
        return { type: 'drop-mid-stream', afterChunks: 3, then: { type: 'tool-calls', calls: [{ name: 'lookup', arguments: { q: 'a long query string' } }], chunks: 6 } };
      case 'stall':
        return { type: 'stall-mid-stream', afterChunks: frames(req), then: FULL };
      case 'rest':
        return { type: 'text', text: REST, chunks: 3 };
      case 'rest-a':
        return { type: 'text', text: ` ${REST}`, chunks: 3 };
      default:
        return undefined;
    }
  });
});

/** Frames up to the third text delta: a Responses stream opens with four frames before its first text. */
const frames = (req: MockRequest) => (req.endpoint === 'openai.responses' ? 7 : 4);

/** The partial answer a continuation request carries (Chat Completions messages or Responses input items). */
function partialSent(req: MockRequest): string {
  const items = (req.json.messages ?? req.json.input) as Array<{ role: string; content: string | Array<{ text?: string }> }>;
  const last = items.at(-1)!;
  expect(JSON.stringify(last.content)).toContain(CONTINUE_PROMPT);
  const partial = items.at(-2)!;
  expect(partial.role).toBe('assistant');
  return typeof partial.content === 'string' ? partial.content : partial.content.map((p) => p.text ?? '').join('');
}

const continuationOf = (model: string): MockRequest => {
  const hits = env.mock.requests.filter((r) => r.model === model);
  expect(hits).toHaveLength(1);
  return hits[0]!;
};

describe('midStreamRecovery: continue', () => {
  it('Chat Completions (OpenAI SDK): the cut stream goes on with the next target, one seamless reply with one finish', async () => {
    const stream = await openai.chat.completions.create({ model: 'cont', messages: [{ role: 'user', content: 'count' }], stream: true });
    let text = '';
    const finishes: string[] = [];
    const ids = new Set<string>();
    for await (const chunk of stream) {
      ids.add(chunk.id);
      text += chunk.choices[0]?.delta?.content ?? '';
      if (chunk.choices[0]?.finish_reason) finishes.push(chunk.choices[0].finish_reason);
    }
    // The continuation request: the original messages, the partial answer, then the explicit continuation message.
    const msgs = continuationOf('rest').json.messages as Array<{ role: string; content: string }>;
    expect(msgs.at(-1)).toEqual({ role: 'user', content: CONTINUE_PROMPT });
    const partial = msgs.at(-2)!;
    expect(partial.role).toBe('assistant');
    expect(partial.content.length).toBeGreaterThan(0);
    expect(FULL.text.startsWith(partial.content)).toBe(true);
    expect(text).toBe(partial.content + REST);
    expect(finishes).toEqual(['stop']);
    expect(ids.size).toBe(1);
  });

  it('Anthropic Messages (Anthropic SDK) over an Anthropic upstream: the partial answer is prefilled; one message_start, one message_stop', async () => {
    const stream = anthropic.messages.stream({ model: 'cont-anth', max_tokens: 200, messages: [{ role: 'user', content: 'count' }] });
    const types: string[] = [];
    stream.on('streamEvent', (ev) => types.push(ev.type));
    const message = await stream.finalMessage();
    const body = continuationOf('rest-a').json;
    const last = body.messages.at(-1);
    expect(last.role).toBe('assistant');
    const prefill = typeof last.content === 'string' ? last.content : last.content.map((b: { text: string }) => b.text).join('');
    expect(prefill.length).toBeGreaterThan(0);
    expect(prefill).toBe(prefill.trimEnd());
    expect(FULL.text.startsWith(prefill)).toBe(true);
    expect(message.content).toHaveLength(1);
    expect(message.content[0]).toMatchObject({ type: 'text', text: `${prefill} ${REST}` });
    expect(message.stop_reason).toBe('end_turn');
    expect(types.filter((t) => t === 'message_start')).toHaveLength(1);
    expect(types.filter((t) => t === 'message_stop')).toHaveLength(1);
    expect(types.filter((t) => t === 'content_block_start')).toHaveLength(1);
  });

  it('Responses (OpenAI SDK): one response, its text continued, one response.completed', async () => {
    const stream = await openai.responses.create({ model: 'cont', input: 'count', stream: true });
    let text = '';
    const types: string[] = [];
    let completed: any;
    for await (const ev of stream) {
      types.push(ev.type);
      if (ev.type === 'response.output_text.delta') text += ev.delta;
      if (ev.type === 'response.completed') completed = ev.response;
    }
    const partial = partialSent(continuationOf('rest'));
    expect(partial.length).toBeGreaterThan(0);
    expect(text).toBe(partial + REST);
    expect(types.filter((t) => t === 'response.created')).toHaveLength(1);
    expect(types.filter((t) => t === 'response.completed')).toHaveLength(1);
    expect(types).not.toContain('response.failed');
    expect(types).not.toContain('error');
    expect(JSON.stringify(completed.output)).toContain(JSON.stringify(partial + REST));
  });

  it('both attempts are in the request log: the cut one with its error, the continuation noted', async () => {
    const res = await fetch(`${env.router.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${env.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'cont', messages: [{ role: 'user', content: 'count' }], stream: true }),
    });
    await res.text();
    const trace = res.headers.get('x-router-trace-id');
    let rows: any[] = [];
    for (let i = 0; i < 100 && rows.length < 2; i++) {
      rows = ((await env.router.manage('GET', '/api/logs?limit=50')).json.logs as any[]).filter((l) => l.traceId === trace);
      if (rows.length < 2) await new Promise((r) => setTimeout(r, 50));
    }
    const cut = rows.find((r) => r.model === 'cut');
    const rest = rows.find((r) => r.model === 'rest');
    expect(cut.error).toBeTruthy();
    expect(rest.status).toBe(200);
    expect(JSON.parse(rest.notes).continuation.of).toMatch(/^openai\/cut: /);
  });

  it('a tool-call stream is not continued mid-argument: it ends with the error event', async () => {
    const res = await fetch(`${env.router.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${env.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'cont-tool', messages: [{ role: 'user', content: 'look it up' }], stream: true }),
    });
    const raw = await res.text();
    expect(raw).toContain('"error"');
    expect(env.mock.requests.filter((r) => r.model === 'rest')).toHaveLength(0);
  });
});

/** The SSE events of a raw stream: `event:` name (if any) and parsed data. */
function events(raw: string): Array<{ event?: string; data: any }> {
  return raw
    .split(/\r?\n\r?\n/)
    .filter((e) => e.includes('data:') && !e.includes('[DONE]'))
    .map((e) => ({ event: /^event: (.*)$/m.exec(e)?.[1], data: JSON.parse(/^data: (.*)$/m.exec(e)![1]!) }));
}

async function post(path: string, body: unknown): Promise<{ raw: string; ms: number }> {
  const t0 = performance.now();
  const res = await fetch(`${env.router.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${env.key}`, 'x-api-key': env.key, 'anthropic-version': '2023-06-01', 'x-goog-api-key': env.key },
    body: JSON.stringify(body),
  });
  expect(res.status).toBe(200);
  const raw = await res.text();
  return { raw, ms: performance.now() - t0 };
}

describe('midStreamRecovery: error (a stalled stream)', () => {
  it('Chat Completions: data: {error} after the partial text, no finish; the next target is not tried', async () => {
    const { raw, ms } = await post('/v1/chat/completions', { model: 'err', messages: [{ role: 'user', content: 'count' }], stream: true });
    const list = events(raw);
    expect(list.at(-1)!.data.error.message).toMatch(/stalled/);
    expect(list.some((e) => e.data.choices?.[0]?.finish_reason)).toBe(false);
    expect(list.map((e) => e.data.choices?.[0]?.delta?.content ?? '').join('').length).toBeGreaterThan(0);
    expect(ms).toBeLessThan(5000);
    expect(env.mock.requests.filter((r) => r.model === 'rest')).toHaveLength(0);
  });

  it('Anthropic Messages: ends with event: error', async () => {
    const { raw } = await post('/v1/messages', { model: 'err', max_tokens: 100, messages: [{ role: 'user', content: 'count' }], stream: true });
    const list = events(raw);
    expect(list.at(-1)).toMatchObject({ event: 'error', data: { type: 'error' } });
    expect(list.some((e) => e.event === 'message_stop')).toBe(false);
  });

  it('Responses: ends with error then response.failed', async () => {
    const { raw } = await post('/v1/responses', { model: 'err', input: 'count', stream: true });
    const list = events(raw);
    expect(list.slice(-2).map((e) => e.event)).toEqual(['error', 'response.failed']);
    expect(list.some((e) => e.event === 'response.completed')).toBe(false);
  });

  it('Gemini: ends with data: {error}', async () => {
    const { raw } = await post('/v1beta/models/err:streamGenerateContent?alt=sse', { contents: [{ role: 'user', parts: [{ text: 'count' }] }] });
    const list = events(raw);
    expect(list.at(-1)!.data.error).toBeTruthy();
  });
});
