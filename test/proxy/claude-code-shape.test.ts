/**
 * A Claude-Code-shaped request (Claude Code 2.1.x: cached system blocks, a `role: "system"` turn inside
 * `messages` under the mid-conversation-system beta, tools, a tool round trip, `anthropic-beta` header)
 * through the real daemon to mock upstreams: translated to Chat Completions and to Responses, counted by
 * count_tokens, and passed through to Anthropic with its beta flags.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { MockUpstream } from '../mocks/upstream.js';
import type { RouterProcess } from '../support/router-daemon.js';
import { startProxyEnv, type ProxyEnv } from '../support/proxy-env.js';

const BETA = 'claude-code-20250219,interleaved-thinking-2025-05-14,mid-conversation-system-2026-04-07';
const REMINDER = '<system-reminder>Today is Tuesday.</system-reminder>';

function claudeCodeBody(model: string, stream: boolean): Record<string, unknown> {
  return {
    model,
    max_tokens: 32000,
    stream,
    system: [
      { type: 'text', text: "You are Claude Code, Anthropic's official CLI for Claude.", cache_control: { type: 'ephemeral' } },
      { type: 'text', text: 'Use the tools to answer.', cache_control: { type: 'ephemeral' } },
    ],
    messages: [
      { role: 'user', content: [{ type: 'text', text: 'What is in notes.txt?' }] },
      { role: 'system', content: REMINDER },
      { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_01', name: 'Read', input: { file_path: '/tmp/notes.txt' } }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_01', content: 'buy milk', cache_control: { type: 'ephemeral' } }] },
    ],
    tools: [
      {
        name: 'Read',
        description: 'Reads a file.',
        input_schema: { type: 'object', properties: { file_path: { type: 'string' } }, required: ['file_path'] },
      },
    ],
    metadata: { user_id: 'user_abc_account__session_1' },
  };
}

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

async function post(path: string, body: unknown): Promise<Response> {
  return fetch(`${router.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': key, 'anthropic-version': '2023-06-01', 'anthropic-beta': BETA },
    body: JSON.stringify(body),
  });
}

describe('Claude Code shaped request', () => {
  for (const stream of [false, true]) {
    it(`-> Chat Completions keeps the system turn at its place (${stream ? 'stream' : 'json'})`, async () => {
      const res = await post('/v1/messages', claudeCodeBody('openai/gpt-4o', stream));
      const text = await res.text();
      expect(res.status, text).toBe(200);
      if (stream) expect(text).toContain('event: message_stop');
      else expect(JSON.parse(text).content[0].text).toBe('Hello from the mock.');
      const sent = mock.requests.find((r) => r.endpoint === 'openai.chat')!.json as { messages: Array<{ role: string; content: unknown }> };
      expect(sent.messages.map((m) => m.role)).toEqual(['system', 'user', 'system', 'assistant', 'tool']);
      expect(sent.messages[2]).toEqual({ role: 'system', content: REMINDER });
    });
  }

  it('-> Responses keeps the system item at its place', async () => {
    const res = await post('/v1/messages', claudeCodeBody('resp/gpt-5', true));
    const text = await res.text();
    expect(res.status, text).toBe(200);
    expect(text).toContain('event: message_stop');
    const sent = mock.requests.find((r) => r.endpoint === 'openai.responses')!.json as { instructions: string; input: Array<Record<string, unknown>> };
    expect(sent.instructions).toContain('You are Claude Code');
    expect(sent.input.map((i) => i.role ?? i.type)).toEqual(['user', 'system', 'function_call', 'function_call_output']);
    expect(sent.input[1]).toEqual({ type: 'message', role: 'system', content: [{ type: 'input_text', text: REMINDER }] });
  });

  it('sends reasoning_effort to a reasoning model only, never to gpt-4o', async () => {
    for (const [model, effort] of [['openai/gpt-4o', undefined], ['openai/o3', 'high']] as const) {
      mock.reset();
      const res = await post('/v1/messages', { ...claudeCodeBody(model, false), thinking: { type: 'enabled', budget_tokens: 10_000 } });
      expect(res.status, await res.text()).toBe(200);
      const sent = mock.requests.find((r) => r.endpoint === 'openai.chat')!.json as Record<string, unknown>;
      expect(sent.reasoning_effort, model).toBe(effort);
    }
  });

  it("a Chat client without an output limit gets the Anthropic model's own maximum", async () => {
    const res = await fetch(`${router.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
      body: JSON.stringify({ model: 'anthropic/claude-sonnet-4-5', stream: true, messages: [{ role: 'user', content: 'hi' }] }),
    });
    expect(res.status, await res.text()).toBe(200);
    const sent = mock.requests.find((r) => r.endpoint === 'anthropic.messages')!.json as Record<string, unknown>;
    expect(sent.max_tokens).toBe(64_000);
  });

  it('count_tokens counts the mid-conversation system message', async () => {
    const count = async (body: Record<string, unknown>) => {
      const res = await post('/v1/messages/count_tokens', body);
      const text = await res.text();
      expect(res.status, text).toBe(200);
      return JSON.parse(text).input_tokens as number;
    };
    const { max_tokens: _m, stream: _s, ...body } = claudeCodeBody('openai/gpt-4o', false);
    const withSystem = await count(body);
    const messages = (body.messages as Array<{ role: string }>).filter((m) => m.role !== 'system');
    expect(withSystem).toBeGreaterThan(await count({ ...body, messages }));
  });

  it('passes through to Anthropic with the client beta flags', async () => {
    const res = await post('/v1/messages', claudeCodeBody('anthropic/claude-haiku-4-5', false));
    expect(res.status, await res.text()).toBe(200);
    const sent = mock.requests.find((r) => r.endpoint === 'anthropic.messages')!;
    expect(sent.headers['anthropic-beta']).toBe(BETA);
    expect((sent.json as { messages: Array<{ role: string }> }).messages[1]!.role).toBe('system');
  });
});
