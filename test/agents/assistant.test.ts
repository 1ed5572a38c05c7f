/**
 * The assistant (POST /api/copilot/chat) against a real daemon and a mock upstream: the model asks for a
 * tool, router runs it (audited, as the caller), sends the result back, and the model's answer is returned.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startProxyEnv, type ProxyEnv } from '../support/proxy-env.js';

let env: ProxyEnv;

beforeAll(async () => {
  env = await startProxyEnv([{ provider: 'openai', apiKey: 'sk-mock' }]);
}, 60_000);
afterAll(() => env?.stop());

const ask = (body: unknown) => env.router.manage('POST', '/api/copilot/chat', body);

describe('assistant chat', () => {
  it('runs the tool the model asks for and returns the answer built on its result', async () => {
    const before = env.mock.requests.length;
    env.mock.enqueue(
      { type: 'tool-calls', calls: [{ name: 'provider_health', arguments: { provider: 'openai' }, id: 'call_health_1' }] },
      { type: 'text', text: 'Your openai connection is active and its circuit is closed.' },
    );
    const r = await ask({ messages: [{ role: 'user', content: 'Are my providers healthy?' }], model: 'openai/gpt-4o' });
    expect(r.status, JSON.stringify(r.json)).toBe(200);
    expect(r.json).toMatchObject({
      reply: 'Your openai connection is active and its circuit is closed.',
      model: 'openai/gpt-4o',
      rounds: 2,
      toolCalls: [{ name: 'provider_health', arguments: '{"provider":"openai"}', ok: true }],
    });
    expect(r.json.usage.inputTokens).toBeGreaterThan(0);

    const sent = env.mock.requests.slice(before).filter((q) => q.endpoint === 'openai.chat');
    expect(sent).toHaveLength(2);
    const tools = (sent[0]!.json.tools as any[]).map((t) => t.function.name);
    expect(tools).toContain('provider_health');
    expect(tools).toContain('recent_errors');
    expect(tools).not.toContain('chat');
    expect(sent[0]!.json.messages[0].role).toBe('system');
    // The second request carries the model's tool call and router's tool result.
    const msgs = sent[1]!.json.messages as any[];
    const assistant = msgs.find((m) => m.role === 'assistant');
    expect(assistant.tool_calls[0]).toMatchObject({ id: 'call_health_1', function: { name: 'provider_health' } });
    const tool = msgs.find((m) => m.role === 'tool');
    expect(tool.tool_call_id).toBe('call_health_1');
    const result = JSON.parse(typeof tool.content === 'string' ? tool.content : tool.content[0].text);
    expect(result.connections[0]).toMatchObject({ provider: 'openai', isActive: true });

    // The tool call is audited; both model calls are usage rows of the assistant.
    const audit = await env.router.manage('GET', '/api/mcp/audit?tool=provider_health');
    expect(audit.json.entries[0]).toMatchObject({ transport: 'assistant', caller: 'cli', ok: true });
    const logs = await env.router.manage('GET', '/api/logs?limit=10');
    expect((logs.json.logs as any[]).filter((l) => l.endpoint === 'assistant' && l.status === 200)).toHaveLength(2);
  });

  it('a failing tool is reported to the model as an error result, and the answer still comes back', async () => {
    env.mock.enqueue(
      { type: 'tool-calls', calls: [{ name: 'webhook_test', arguments: { id: 'missing' } }, { name: 'no_such_tool', arguments: {} }] },
      { type: 'text', text: 'That webhook does not exist.' },
    );
    const before = env.mock.requests.length;
    const r = await ask({ messages: [{ role: 'user', content: 'Test webhook missing' }], model: 'openai/gpt-4o' });
    expect(r.status).toBe(200);
    expect(r.json.reply).toBe('That webhook does not exist.');
    expect(r.json.toolCalls).toEqual([
      { name: 'webhook_test', arguments: '{"id":"missing"}', ok: false, error: 'Webhook not found.' },
      { name: 'no_such_tool', arguments: '{}', ok: false, error: 'Unknown tool: no_such_tool' },
    ]);
    const msgs = env.mock.requests.slice(before)[1]!.json.messages as any[];
    expect(msgs.filter((m) => m.role === 'tool').map((m) => String(m.content))).toEqual([expect.stringContaining('Webhook not found'), expect.stringContaining('Unknown tool')]);
  });

  it('stops offering tools after agents.assistantMaxToolRounds', async () => {
    expect((await env.router.manage('PATCH', '/api/settings', { agents: { assistantMaxToolRounds: 1 } })).status).toBe(200);
    const before = env.mock.requests.length;
    env.mock.enqueue({ type: 'tool-calls', calls: [{ name: 'list_combos', arguments: {} }] }, { type: 'text', text: 'No combos.' });
    const r = await ask({ messages: [{ role: 'user', content: 'combos?' }], model: 'openai/gpt-4o' });
    expect(r.json).toMatchObject({ reply: 'No combos.', rounds: 2 });
    const sent = env.mock.requests.slice(before);
    expect(sent[0]!.json.tools).toBeDefined();
    expect(sent[1]!.json.tools).toBeUndefined();
    expect((await env.router.manage('PATCH', '/api/settings', { agents: { assistantMaxToolRounds: 6 } })).status).toBe(200);
  });

  it('uses agents.assistantModel when the request names no model; 409 when neither is set', async () => {
    const none = await ask({ messages: [{ role: 'user', content: 'hi' }] });
    expect(none.status).toBe(409);
    expect(none.json.error.message).toMatch(/agents\.assistantModel/);
    expect((await env.router.manage('PATCH', '/api/settings', { agents: { assistantModel: 'openai/gpt-4o-mini' } })).status).toBe(200);
    env.mock.enqueue({ type: 'text', text: 'Hi.' });
    const r = await ask({ messages: [{ role: 'user', content: 'hi' }] });
    expect(r.json).toMatchObject({ reply: 'Hi.', model: 'openai/gpt-4o-mini', rounds: 1, toolCalls: [] });
  });

  it('validates the body', async () => {
    for (const body of [{}, { messages: [] }, { messages: [{ role: 'assistant', content: 'x' }] }, { messages: [{ role: 'user', content: 'x' }], extra: 1 }, { messages: [{ role: 'system', content: 'x' }] }]) {
      const r = await ask(body);
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.json.error.message.length).toBeGreaterThan(0);
    }
  });
});
