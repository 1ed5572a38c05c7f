import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startMockUpstream, type MockUpstream } from './upstream.js';
import { strictUpstream } from './strict.js';
import { DEFAULT_SIGNATURE } from './reply.js';

let mock: MockUpstream;
beforeAll(async () => {
  mock = await startMockUpstream();
  mock.handle(strictUpstream(['sig-scripted']));
});
afterAll(() => mock.close());

const post = async (body: object, headers: Record<string, string> = {}) => {
  const res = await fetch(`${mock.anthropicBase}/messages`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'anthropic-version': '2023-06-01', ...headers },
    body: JSON.stringify({ model: 'claude-sonnet-4-5', max_tokens: 10, ...body }),
  });
  return { status: res.status, json: (await res.json()) as any };
};

const withThinking = (signature: string) => ({
  messages: [
    { role: 'user', content: 'hi' },
    { role: 'assistant', content: [{ type: 'thinking', thinking: 'x', signature }, { type: 'text', text: 'y' }] },
    { role: 'user', content: 'again' },
  ],
});

describe('strictUpstream: Anthropic refusals of the real API', () => {
  it('refuses a thinking signature the mock did not issue, accepts its own and scripted ones', async () => {
    const foreign = await post(withThinking('skip_thought_signature_validator'));
    expect(foreign.status).toBe(400);
    expect(foreign.json.error).toMatchObject({ type: 'invalid_request_error', message: expect.stringContaining('Invalid `signature` in `thinking` block') });
    expect((await post(withThinking(DEFAULT_SIGNATURE))).status).toBe(200);
    expect((await post(withThinking('sig-scripted'))).status).toBe(200);
  });

  it('refuses temperature together with top_p', async () => {
    const both = await post({ messages: [{ role: 'user', content: 'hi' }], temperature: 1, top_p: 0.95 });
    expect(both.status).toBe(400);
    expect(both.json.error.message).toContain('`temperature` and `top_p` cannot both be specified');
    expect((await post({ messages: [{ role: 'user', content: 'hi' }], temperature: 1 })).status).toBe(200);
  });
});

describe('strictUpstream: OpenAI refusals of the real API', () => {
  const chat = async (model: string, extra: object) => {
    const res = await fetch(`${mock.openaiBase}/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model, messages: [{ role: 'user', content: 'hi' }], ...extra }),
    });
    return { status: res.status, json: (await res.json()) as any };
  };

  it('refuses reasoning_effort for a model without reasoning, accepts it for one with', async () => {
    const r = await chat('gpt-4o', { reasoning_effort: 'high' });
    expect(r.status).toBe(400);
    expect(r.json.error).toMatchObject({ code: 'unsupported_parameter', message: expect.stringContaining("'reasoning_effort'") });
    expect((await chat('gpt-5', { reasoning_effort: 'high' })).status).toBe(200);
    expect((await chat('gpt-4o', {})).status).toBe(200);
  });
});
