/**
 * An OpenAI-format client's prompt-cache markers reach an Anthropic upstream through the daemon (issue 27
 * item 8): the official openai SDK sends `cache_control` on a system part, a user part and a tool (as
 * LiteLLM and OpenRouter clients do), and the Messages request router sends carries each on its block.
 */
import OpenAI from 'openai';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startProxyEnv, type ProxyEnv } from '../support/proxy-env.js';

let env: ProxyEnv;
beforeAll(async () => {
  env = await startProxyEnv([{ provider: 'anthropic', apiKey: 'sk-ant-upstream-0123456789' }]);
}, 60_000);
afterAll(async () => {
  await env?.stop();
});

it('cache_control on OpenAI content parts and tools arrives on the Anthropic blocks', async () => {
  const client = new OpenAI({ apiKey: env.key, baseURL: `${env.router.url}/v1`, maxRetries: 0 });
  const eph = { type: 'ephemeral' };
  const reply = await client.chat.completions.create({
    model: 'anthropic/claude-sonnet-4-5',
    max_tokens: 50,
    messages: [
      { role: 'system', content: [{ type: 'text', text: 'A long, stable system prompt.', cache_control: eph } as never] },
      { role: 'user', content: [{ type: 'text', text: 'A long document.', cache_control: eph } as never, { type: 'text', text: 'Summarize it.' }] },
    ],
    tools: [{ type: 'function', function: { name: 'lookup', parameters: { type: 'object', properties: {} } }, cache_control: { type: 'ephemeral', ttl: '1h' } } as never],
  });
  expect(reply.choices[0]!.message).toBeDefined();
  const sent = env.mock.requests.filter((r) => r.endpoint === 'anthropic.messages').at(-1)!.json;
  expect(sent.system).toEqual([{ type: 'text', text: 'A long, stable system prompt.', cache_control: eph }]);
  expect(sent.messages[0].content).toEqual([
    { type: 'text', text: 'A long document.', cache_control: eph },
    { type: 'text', text: 'Summarize it.' },
  ]);
  expect(sent.tools[0]).toMatchObject({ name: 'lookup', cache_control: { type: 'ephemeral', ttl: '1h' } });
});
