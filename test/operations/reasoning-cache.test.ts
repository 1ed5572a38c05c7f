/**
 * Reasoning cache (/api/cache/reasoning): a Chat Completions client that drops thinking continues a
 * tool-use conversation with an Anthropic model that has extended thinking on; router re-inserts the
 * thinking block with its original signature, only for the family that issued it.
 */
import type { ServerResponse } from 'node:http';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { MockRequest } from '../mocks/types.js';
import { startProxyEnv, type ProxyEnv } from '../support/proxy-env.js';

let env: ProxyEnv;
const SIG = 'EqQBCkgIARABGAIiQHNpZ25hdHVyZS1vZi10aGUtdGhpbmtpbmc=';
const THOUGHT = 'The user wants the weather in Paris; I should call the tool.';

beforeAll(async () => {
  env = await startProxyEnv([
    { provider: 'anthropic', apiKey: 'sk-ant-upstream' },
    { provider: 'gemini', apiKey: 'gm-upstream' },
  ]);
}, 60_000);
afterEach(async () => {
  env.mock.reset();
  await env.router.manage('DELETE', '/api/cache/reasoning');
});
afterAll(async () => {
  await env?.stop();
});

const tools = [{ type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } } }];

/** The first turn's reply: thinking + signature, then a tool_use (JSON or SSE). */
function thinkingToolUse(req: MockRequest, res: ServerResponse, toolId: string): void {
  const content = [
    { type: 'thinking', thinking: THOUGHT, signature: SIG },
    { type: 'tool_use', id: toolId, name: 'get_weather', input: { city: 'Paris' } },
  ];
  const usage = { input_tokens: 20, output_tokens: 30 };
  if (!req.stream) {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ id: 'msg_1', type: 'message', role: 'assistant', model: req.model, content, stop_reason: 'tool_use', stop_sequence: null, usage }));
    return;
  }
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  const ev = (event: string, data: unknown) => res.write(`event: ${event}\ndata: ${JSON.stringify({ type: event, ...(data as object) })}\n\n`);
  ev('message_start', { message: { id: 'msg_1', type: 'message', role: 'assistant', model: req.model, content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 20, output_tokens: 1 } } });
  ev('content_block_start', { index: 0, content_block: { type: 'thinking', thinking: '', signature: '' } });
  ev('content_block_delta', { index: 0, delta: { type: 'thinking_delta', thinking: THOUGHT } });
  ev('content_block_delta', { index: 0, delta: { type: 'signature_delta', signature: SIG } });
  ev('content_block_stop', { index: 0 });
  ev('content_block_start', { index: 1, content_block: { type: 'tool_use', id: toolId, name: 'get_weather', input: {} } });
  ev('content_block_delta', { index: 1, delta: { type: 'input_json_delta', partial_json: '{"city":"Paris"}' } });
  ev('content_block_stop', { index: 1 });
  ev('message_delta', { delta: { stop_reason: 'tool_use', stop_sequence: null }, usage: { output_tokens: 30 } });
  ev('message_stop', {});
  res.end();
}

/**
 * The Anthropic API's rule with thinking on: the last assistant turn must start with a thinking block
 * (with a signature Anthropic issued) when it holds tool_use. Anything else: the API's 400.
 */
function requireThinking(req: MockRequest) {
  const body = req.json as { thinking?: unknown; messages: Array<{ role: string; content: unknown }> };
  const last = [...body.messages].reverse().find((m) => m.role === 'assistant');
  const blocks = Array.isArray(last?.content) ? (last!.content as Array<{ type: string; signature?: string }>) : [];
  if (body.thinking && blocks.some((b) => b.type === 'tool_use') && (blocks[0]?.type !== 'thinking' || blocks[0]?.signature !== SIG)) {
    return {
      type: 'status' as const,
      status: 400,
      errorType: 'invalid_request_error',
      message: 'messages.1.content.0.type: Expected `thinking` or `redacted_thinking`, but found `tool_use`.',
    };
  }
  return { type: 'text' as const, text: 'It is sunny in Paris.' };
}

async function chat(model: string, messages: unknown[], stream = false) {
  const res = await fetch(`${env.router.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${env.key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model, messages, tools, reasoning_effort: 'medium', max_tokens: 4000, stream }),
  });
  return { status: res.status, headers: res.headers, text: await res.text() };
}

/** The second turn as a client that drops thinking sends it: the assistant turn with only its tool call. */
function secondTurn(toolId: string) {
  return [
    { role: 'user', content: 'Weather in Paris?' },
    { role: 'assistant', content: null, tool_calls: [{ id: toolId, type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }] },
    { role: 'tool', tool_call_id: toolId, content: '22 C, sunny' },
  ];
}

function scriptAnthropic(toolId: string) {
  let turn = 0;
  env.mock.handle((req) => {
    if (req.endpoint !== 'anthropic.messages') return undefined;
    if (turn++ === 0) return { type: 'custom', fn: (r, res) => thinkingToolUse(r, res, toolId) };
    return requireThinking(req);
  });
}

describe('reasoning cache', () => {
  for (const stream of [false, true]) {
    it(`re-inserts the dropped thinking block with its original signature (${stream ? 'streamed' : 'JSON'} first turn)`, async () => {
      const toolId = stream ? 'toolu_stream_01' : 'toolu_json_01';
      scriptAnthropic(toolId);
      const first = await chat('anthropic/claude-sonnet-4-5', [{ role: 'user', content: 'Weather in Paris?' }], stream);
      expect(first.status, first.text).toBe(200);
      expect(first.text).toContain(toolId);

      const second = await chat('anthropic/claude-sonnet-4-5', secondTurn(toolId));
      expect(second.status, second.text).toBe(200);
      expect(JSON.parse(second.text).choices[0].message.content).toBe('It is sunny in Paris.');
      const sent = env.mock.requests.at(-1)!.json as { thinking?: unknown; messages: Array<{ role: string; content: Array<Record<string, unknown>> }> };
      expect(sent.thinking).toBeTruthy();
      expect(sent.messages[1]!.role).toBe('assistant');
      expect(sent.messages[1]!.content[0]).toEqual({ type: 'thinking', thinking: THOUGHT, signature: SIG });
      expect(sent.messages[1]!.content[1]).toMatchObject({ type: 'tool_use', id: toolId });

      const logs = await env.router.manage('GET', '/api/logs?limit=5');
      const row = logs.json.logs.find((l: { traceId: string }) => l.traceId === second.headers.get('x-router-trace-id'));
      expect(JSON.parse(row.notes)).toMatchObject({ reasoningCache: { restored: 1 } });
    });
  }

  it('lists entries without their content (whole with ?full=1), deletes one, clears; after clearing nothing is re-inserted', async () => {
    scriptAnthropic('toolu_list_01');
    expect((await chat('anthropic/claude-sonnet-4-5', [{ role: 'user', content: 'Weather in Paris?' }])).status).toBe(200);

    const list = await env.router.manage('GET', '/api/cache/reasoning');
    expect(list.status).toBe(200);
    expect(list.json.stats).toMatchObject({ entries: 1, maxEntries: 5000, ttlSeconds: 86400 });
    expect(list.json.stats.stores).toBeGreaterThanOrEqual(1);
    const [entry] = list.json.entries;
    expect(entry).toMatchObject({ issuer: 'anthropic', provider: 'anthropic', toolCallIds: ['toolu_list_01'], parts: [{ type: 'thinking', textChars: THOUGHT.length, signed: true }] });
    expect(JSON.stringify(list.json)).not.toContain(SIG);
    const full = await env.router.manage('GET', '/api/cache/reasoning?full=1');
    expect(full.json.entries[0].parts[0]).toMatchObject({ type: 'thinking', text: THOUGHT, signature: SIG });

    expect((await env.router.manage('DELETE', `/api/cache/reasoning/${entry.id}`)).status).toBe(200);
    expect((await env.router.manage('DELETE', `/api/cache/reasoning/${entry.id}`)).status).toBe(404);
    expect((await env.router.manage('GET', '/api/cache/reasoning')).json.entries).toEqual([]);

    env.mock.reset();
    scriptAnthropic('toolu_list_02');
    expect((await chat('anthropic/claude-sonnet-4-5', [{ role: 'user', content: 'Weather in Paris?' }])).status).toBe(200);
    expect((await env.router.manage('GET', '/api/cache/reasoning')).json.stats.entries).toBe(1);
    const cleared = await env.router.manage('DELETE', '/api/cache/reasoning');
    expect(cleared.json).toEqual({ cleared: 1 });
    expect((await env.router.manage('GET', '/api/cache/reasoning')).json.stats.entries).toBe(0);
    const second = await chat('anthropic/claude-sonnet-4-5', secondTurn('toolu_list_02'));
    expect(second.status).toBe(400);
    expect(second.text).toContain('Expected `thinking`');
  });

  it('re-inserts only for the family that signed it: the same conversation to Gemini gets no Anthropic signature', async () => {
    scriptAnthropic('toolu_family_01');
    expect((await chat('anthropic/claude-sonnet-4-5', [{ role: 'user', content: 'Weather in Paris?' }])).status).toBe(200);
    expect((await env.router.manage('GET', '/api/cache/reasoning')).json.entries[0].toolCallIds).toEqual(['toolu_family_01']);
    const r = await chat('gemini/gemini-2.5-flash', secondTurn('toolu_family_01'));
    expect(r.status, r.text).toBe(200);
    const sent = env.mock.requests.at(-1)!;
    expect(sent.endpoint).toBe('gemini.generate');
    expect(sent.body).not.toContain(SIG);
    expect(sent.body).not.toContain(THOUGHT);
  });
});
