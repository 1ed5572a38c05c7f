import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import OpenAI from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import type { MockUpstream } from '../mocks/upstream.js';
import type { RouterProcess } from '../support/router-daemon.js';
import { startProxyEnv, type ProxyEnv } from '../support/proxy-env.js';

let mock: MockUpstream;
let router: RouterProcess;
let key: string;

let env: ProxyEnv;

beforeAll(async () => {
  env = await startProxyEnv([
    { provider: 'openai', apiKey: 'sk-upstream-openai' },
    { provider: 'anthropic', apiKey: 'sk-ant-upstream' },
    { provider: 'gemini', apiKey: 'gem-upstream' },
  ]);
  ({ mock, router, key } = env);
});
afterAll(async () => {
  await env?.stop();
});

describe('smoke', () => {
  it('openai sdk -> openai upstream', async () => {
    const client = new OpenAI({ apiKey: key, baseURL: `${router.url}/v1`, maxRetries: 0 });
    const r = await client.chat.completions.create({ model: 'openai/gpt-4o', messages: [{ role: 'user', content: 'hi' }] });
    expect(r.choices[0]!.message.content).toBe('Hello from the mock.');
    const s = await client.chat.completions.create({ model: 'anthropic/claude-haiku-4-5', messages: [{ role: 'user', content: 'hi' }], stream: true });
    let text = '';
    for await (const c of s) text += c.choices[0]?.delta?.content ?? '';
    expect(text).toBe('Hello from the mock.');
  });
  it('anthropic sdk -> gemini upstream', async () => {
    const client = new Anthropic({ apiKey: key, baseURL: router.url, maxRetries: 0 });
    const m = await client.messages.create({ model: 'gemini/gemini-2.5-flash', max_tokens: 100, messages: [{ role: 'user', content: 'hi' }] });
    expect(m.content[0]).toMatchObject({ type: 'text', text: 'Hello from the mock.' });
    const final = await client.messages.stream({ model: 'openai/gpt-4o', max_tokens: 100, messages: [{ role: 'user', content: 'hi' }] }).finalMessage();
    expect(final.content[0]).toMatchObject({ type: 'text', text: 'Hello from the mock.' });
  });
});
