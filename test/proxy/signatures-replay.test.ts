/**
 * A real Anthropic thinking signature (recorded provider bytes, replayed by the mock) handed to a
 * Responses client through the daemon, and replayed by that client: it reaches Anthropic again, exactly as
 * issued, and never Gemini or a Responses upstream.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { MockUpstream } from '../mocks/upstream.js';
import type { RouterProcess } from '../support/router-daemon.js';
import { startProxyEnv, type ProxyEnv } from '../support/proxy-env.js';

const RECORDED = 'anthropic/pydantic-ai/test_anthropic_model_thinking_part.yaml';
/** The signature Anthropic put on the thinking block of that recording's first reply. */
const SIGNATURE_HEAD = 'Eq8CCkYICxgCKkDdadQOXMzNBqjrNVAKWsgUfg49';

let env: ProxyEnv;
let mock: MockUpstream;
let router: RouterProcess;
let key: string;

beforeAll(async () => {
  env = await startProxyEnv([
    { provider: 'anthropic', apiKey: 'sk-up-anthropic' },
    { provider: 'gemini', apiKey: 'sk-up-gemini' },
  ], [{ prefix: 'resp', apiType: 'responses' }]);
  ({ mock, router, key } = env);
}, 60_000);

afterAll(async () => {
  await env?.stop();
});

async function responses(body: unknown): Promise<Record<string, any>> {
  const res = await fetch(`${router.url}/v1/responses`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  expect(res.status, text).toBe(200);
  return JSON.parse(text);
}

describe('a recorded Anthropic signature through a Responses client', () => {
  it('goes back to Anthropic as issued, and to no other family', async () => {
    mock.enqueue({ type: 'replay', file: RECORDED, interaction: 0 });
    const first = await responses({ model: 'anthropic/claude-sonnet-4-5', input: 'How do I cross the street?', reasoning: { effort: 'low' } });
    const reasoning = first.output.find((i: { type: string }) => i.type === 'reasoning');
    expect(reasoning.encrypted_content).toBeDefined();
    // Held by the client in a form no OpenAI server would take for its own.
    expect(reasoning.encrypted_content).not.toContain(SIGNATURE_HEAD);
    const input = [{ role: 'user', content: 'How do I cross the street?' }, ...first.output, { role: 'user', content: 'And a river?' }];

    mock.reset();
    await responses({ model: 'anthropic/claude-sonnet-4-5', input, reasoning: { effort: 'low' } });
    const toAnthropic = mock.requests.find((r) => r.endpoint === 'anthropic.messages')!.json as { messages: Array<{ content: any }> };
    const thinking = toAnthropic.messages[1]!.content.find((b: { type: string }) => b.type === 'thinking');
    expect(thinking.signature.startsWith(SIGNATURE_HEAD)).toBe(true);

    for (const [model, endpoint] of [['gemini/gemini-2.5-flash', 'gemini.generate'], ['resp/gpt-5', 'openai.responses']] as const) {
      mock.reset();
      await responses({ model, input, reasoning: { effort: 'low' } });
      const sent = mock.requests.find((r) => r.endpoint === endpoint)!;
      expect(sent.body, model).not.toContain(SIGNATURE_HEAD);
      expect(sent.body, model).not.toContain(reasoning.encrypted_content);
    }
  });
});
