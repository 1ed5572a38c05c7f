/**
 * Stream-from-cache framing through the real daemon, read by the official SDKs: a non-streaming reply is
 * cached, then the same request made with streaming is answered from the cache (no upstream call) as the
 * client format's event stream, which `openai` and `@anthropic-ai/sdk` assemble into the same message.
 */
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { RouterProcess } from '../support/router-daemon.js';
import type { MockUpstream } from '../mocks/upstream.js';
import { startProxyEnv, type ProxyEnv } from '../support/proxy-env.js';

let mock: MockUpstream;
let router: RouterProcess;
let key: string;

let env: ProxyEnv;

beforeAll(async () => {
  env = await startProxyEnv([
    { provider: 'openai', apiKey: 'sk-up' },
    { provider: 'anthropic', apiKey: 'sk-ant-up' },
  ]);
  ({ mock, router, key } = env);
});
afterEach(() => mock.reset());
afterAll(async () => {
  await env?.stop();
});

const TEXT = 'Paris is the capital of France, and its largest city.';

describe('openai SDK', () => {
  const client = () => new OpenAI({ apiKey: key, baseURL: `${router.url}/v1`, maxRetries: 0, defaultHeaders: { 'x-router-cache': 'use' } });
  const params = (model: string) => ({ model, messages: [{ role: 'user' as const, content: `Capital of France? (${model})` }] });

  for (const model of ['openai/gpt-4o', 'anthropic/claude-haiku-4-5']) {
    it(`streams a cached reply (${model}) that the SDK assembles`, async () => {
      mock.enqueue({ type: 'text', text: TEXT, usage: { inputTokens: 12, outputTokens: 11 } });
      const first = await client().chat.completions.create(params(model)).withResponse();
      expect(first.response.headers.get('x-router-cache')).toBe('miss');
      expect(first.data.choices[0]!.message.content).toBe(TEXT);

      const { data: stream, response } = await client()
        .chat.completions.create({ ...params(model), stream: true, stream_options: { include_usage: true } })
        .withResponse();
      expect(response.headers.get('x-router-cache')).toBe('hit');
      let text = '';
      let finish: string | null = null;
      let usage: OpenAI.CompletionUsage | undefined;
      for await (const chunk of stream) {
        text += chunk.choices[0]?.delta?.content ?? '';
        finish = chunk.choices[0]?.finish_reason ?? finish;
        usage = chunk.usage ?? usage;
      }
      expect(text).toBe(TEXT);
      expect(finish).toBe('stop');
      expect(usage).toMatchObject({ prompt_tokens: 12, completion_tokens: 11 });

      // The SDK's own stream helper accepts the same framing.
      const helper = client().chat.completions.stream(params(model));
      const final = await helper.finalChatCompletion();
      expect(final.choices[0]!.message.content).toBe(TEXT);
      expect(mock.requests).toHaveLength(1);
    });
  }
});

describe('@anthropic-ai/sdk', () => {
  const client = () => new Anthropic({ apiKey: key, baseURL: router.url, maxRetries: 0, defaultHeaders: { 'x-router-cache': 'use' } });
  const params = (model: string) => ({ model, max_tokens: 256, messages: [{ role: 'user' as const, content: `Capital of France? (${model})` }] });

  for (const model of ['anthropic/claude-sonnet-4-5', 'openai/gpt-4o']) {
    it(`streams a cached reply (${model}) that the SDK assembles`, async () => {
      mock.enqueue({ type: 'text', text: TEXT, usage: { inputTokens: 12, outputTokens: 11 } });
      const first = await client().messages.create(params(model)).withResponse();
      expect(first.response.headers.get('x-router-cache')).toBe('miss');
      expect(first.data.content).toEqual([expect.objectContaining({ type: 'text', text: TEXT })]);

      const stream = client().messages.stream(params(model));
      const texts: string[] = [];
      stream.on('text', (t) => texts.push(t));
      const final = await stream.finalMessage();
      expect(texts.join('')).toBe(TEXT);
      expect(final.content).toEqual([expect.objectContaining({ type: 'text', text: TEXT })]);
      expect(final.stop_reason).toBe('end_turn');
      expect(final.usage).toMatchObject({ input_tokens: 12, output_tokens: 11 });

      const raw = await client()
        .messages.create({ ...params(model), stream: true })
        .withResponse();
      expect(raw.response.headers.get('x-router-cache')).toBe('hit');
      const types: string[] = [];
      for await (const ev of raw.data) types.push(ev.type);
      expect(types[0]).toBe('message_start');
      expect(types.at(-1)).toBe('message_stop');
      expect(mock.requests).toHaveLength(1);
    });
  }
});
