/**
 * A stream that breaks after its first bytes reached the client ends in the client's own error shape:
 * Responses with `error` + `response.failed`, numbered after what was sent (Codex waits for a terminal
 * event), Chat Completions with `data: {error}`, Anthropic with `event: error`, Gemini with `data: {error}`.
 * Passthrough and translated streams alike; real daemon, mock upstream cutting the socket mid-stream.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { MockUpstream } from '../mocks/upstream.js';
import type { RouterProcess } from '../support/router-daemon.js';
import { startProxyEnv, type ProxyEnv } from '../support/proxy-env.js';

let env: ProxyEnv;
let mock: MockUpstream;
let router: RouterProcess;
let key: string;

beforeAll(async () => {
  env = await startProxyEnv([
    { provider: 'openai', apiKey: 'sk-up-openai' },
    { provider: 'anthropic', apiKey: 'sk-up-anthropic' },
  ], [{ prefix: 'resp', apiType: 'responses' }]);
  ({ mock, router, key } = env);
}, 60_000);

afterAll(async () => {
  await env?.stop();
});

beforeEach(() => mock.reset());

const LONG = { type: 'text' as const, text: 'one two three four five six seven eight', chunks: 8 };

function dropAfter(frames: number): void {
  mock.handle(() => ({ type: 'drop-mid-stream', afterChunks: frames, then: LONG }));
}

async function post(path: string, body: unknown): Promise<string> {
  const res = await fetch(`${router.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${key}`, 'x-api-key': key, 'anthropic-version': '2023-06-01' },
    body: JSON.stringify(body),
  });
  expect(res.status).toBe(200);
  return res.text();
}

function events(text: string): Array<{ event?: string; data: Record<string, unknown> }> {
  return text
    .split('\n\n')
    .filter((e) => e.includes('data:') && !e.includes('[DONE]'))
    .map((e) => {
      const event = /^event: (.*)$/m.exec(e)?.[1];
      const data = JSON.parse(/^data: (.*)$/m.exec(e)![1]!) as Record<string, unknown>;
      return { ...(event ? { event } : {}), data };
    });
}

const responsesBody = (model: string) => ({ model, input: 'hi', stream: true });

describe('mid-stream failure', () => {
  for (const [label, model, frames] of [
    ['passthrough to a Responses upstream', 'resp/gpt-5', 6],
    ['translated to Chat Completions', 'openai/gpt-4o', 5],
  ] as const) {
    it(`ends a Responses stream with response.failed, in sequence (${label})`, async () => {
      dropAfter(frames);
      const list = events(await post('/v1/responses', responsesBody(model)));
      const last = list.slice(-2);
      expect(last.map((e) => e.event)).toEqual(['error', 'response.failed']);
      const failed = last[1]!.data as { response: { status: string; error: { message: string } } };
      expect(failed.response.status).toBe('failed');
      expect(failed.response.error.message).toMatch(/upstream/i);
      const seq = list.map((e) => e.data.sequence_number);
      expect(seq).toEqual(seq.map((_, i) => i));
    });
  }

  it('ends a Chat Completions stream with data: {error} in the OpenAI vocabulary (translated from Anthropic)', async () => {
    dropAfter(4);
    const list = events(await post('/v1/chat/completions', { model: 'anthropic/claude-haiku-4-5', messages: [{ role: 'user', content: 'hi' }], stream: true }));
    expect(list.at(-1)!.data).toEqual({ error: { message: expect.any(String), type: 'upstream_error', code: 'bad_gateway' } });
  });

  it('ends an Anthropic stream with event: error, Anthropic error types (translated and passthrough)', async () => {
    for (const [model, frames] of [['openai/gpt-4o', 3], ['anthropic/claude-haiku-4-5', 4]] as const) {
      dropAfter(frames);
      const list = events(await post('/v1/messages', { model, max_tokens: 50, messages: [{ role: 'user', content: 'hi' }], stream: true }));
      expect(list.at(-1), model).toEqual({ event: 'error', data: { type: 'error', error: { type: 'api_error', message: expect.any(String) } } });
      mock.reset();
    }
  });

  it('ends a Gemini stream with data: {error: {code, message, status}}', async () => {
    dropAfter(3);
    const list = events(await post('/v1beta/models/openai/gpt-4o:streamGenerateContent?alt=sse', { contents: [{ role: 'user', parts: [{ text: 'hi' }] }] }));
    expect(list.at(-1)!.data).toEqual({ error: { code: 502, message: expect.any(String), status: expect.any(String) } });
  });
});
