import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startMockUpstream, type MockUpstream } from '../mocks/upstream.js';
import { startRouter, type RouterProcess } from '../support/router-daemon.js';

let mock: MockUpstream;
let router: RouterProcess;
let key: string;

const CONTEXT = 1000;
const words = (n: number, seed = 'w') => Array.from({ length: n }, (_, i) => `${seed}${i % 97}`).join(' ');

async function chat(body: Record<string, unknown>) {
  const res = await fetch(`${router.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'tiny/tiny-1', ...body }),
  });
  return { status: res.status, headers: res.headers, text: await res.text() };
}

const chatRequests = () => mock.requests.filter((r) => r.endpoint === 'openai.chat');

beforeAll(async () => {
  mock = await startMockUpstream();
  router = await startRouter();
  key = await router.createKey();
  // A provider node whose one model reports a small context length through its model list (GET /v1/models).
  const node = await router.manage('POST', '/api/provider-nodes', { name: 'tiny', prefix: 'tiny', type: 'openai-compatible', baseUrl: mock.openaiBase });
  expect(node.status, JSON.stringify(node.json)).toBe(201);
  const conn = await router.addConnection({ provider: node.json.id, apiKey: 'tiny-upstream-key-123456' });
  mock.handle((req) =>
    req.endpoint === 'openai.models'
      ? {
          type: 'custom',
          fn: (_req, res) => {
            res.writeHead(200, { 'content-type': 'application/json' });
            res.end(JSON.stringify({ object: 'list', data: [{ id: 'tiny-1', object: 'model', owned_by: 'test', context_length: CONTEXT }] }));
          },
        }
      : undefined,
  );
  const sync = await router.manage('POST', `/api/providers/${conn.id}/sync-models`);
  expect(sync.json.models).toEqual([{ id: 'tiny-1', contextLength: CONTEXT }]);
  const put = await router.manage('PUT', '/api/settings/compression', {
    enabled: true,
    toolOutputMaxTokens: 100,
    reserveOutputTokens: 100,
    safetyMarginPercent: 0,
  });
  expect(put.status, JSON.stringify(put.json)).toBe(200);
});
afterEach(() => mock.reset());
afterAll(async () => {
  await router?.stop();
  await mock?.close();
});

describe('compression through the proxy (model tiny/tiny-1, context 1000)', () => {
  it('settings: GET/PUT /api/settings/compression, the same object under /api/settings, validated', async () => {
    const g = await router.manage('GET', '/api/settings/compression');
    expect(g.json).toEqual({ enabled: true, toolOutputMaxTokens: 100, reserveOutputTokens: 100, safetyMarginPercent: 0 });
    expect((await router.manage('GET', '/api/settings')).json.compression).toEqual(g.json);
    expect((await router.manage('PUT', '/api/settings/compression', { enabled: 'yes' })).status).toBe(400);
    expect((await router.manage('PUT', '/api/settings/compression', { toolOutputMaxTokens: 1 })).status).toBe(400);
  });

  it('a request that fits goes through untouched, without the header', async () => {
    const messages = [{ role: 'user', content: 'hello' }];
    const r = await chat({ messages });
    expect(r.status, r.text).toBe(200);
    expect(r.headers.get('x-router-compression')).toBeNull();
    expect((chatRequests()[0]!.json as any).messages).toEqual(messages);
  });

  it('trims an oversized tool output (head and tail kept) and says so in the header', async () => {
    const big = `HEAD ${words(1500)} TAIL`;
    const messages = [
      { role: 'system', content: 'You are terse.' },
      { role: 'user', content: 'read a.txt' },
      { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'read', arguments: '{"p":"a.txt"}' } }] },
      { role: 'tool', tool_call_id: 'call_1', content: big },
      { role: 'user', content: 'summarize it' },
    ];
    const r = await chat({ messages });
    expect(r.status, r.text).toBe(200);
    const h = r.headers.get('x-router-compression')!;
    expect(h).toMatch(/^trimmed-tool-outputs=1; dropped-turns=0; tokens=(\d+)->(\d+)$/);
    const [, before, after] = /tokens=(\d+)->(\d+)/.exec(h)!.map(Number);
    expect(before).toBeGreaterThan(CONTEXT);
    expect(after).toBeLessThanOrEqual(CONTEXT - 100);
    const sent = (chatRequests()[0]!.json as any).messages;
    expect(sent.map((m: any) => m.role)).toEqual(['system', 'user', 'assistant', 'tool', 'user']);
    expect(sent[3].content).toMatch(/^HEAD [\s\S]*\[\.\.\. \d+ tokens of tool output trimmed by router \.\.\.\][\s\S]* TAIL$/);
    expect(sent[3].tool_call_id).toBe('call_1');
  });

  it('drops the oldest turns, keeping the system prompt, the last user turn and tool pairs together (streamed)', async () => {
    const messages: any[] = [{ role: 'system', content: 'SYSTEM PROMPT' }];
    for (let t = 0; t < 6; t++) {
      messages.push({ role: 'user', content: `turn ${t} ${words(90, `u${t}`)}` });
      if (t === 4) {
        messages.push({ role: 'assistant', content: null, tool_calls: [{ id: 'call_4', type: 'function', function: { name: 'look', arguments: '{}' } }] });
        messages.push({ role: 'tool', tool_call_id: 'call_4', content: words(40, 'tr') });
      }
      messages.push({ role: 'assistant', content: words(90, `a${t}`) });
    }
    messages.push({ role: 'user', content: 'FINAL QUESTION' });
    const r = await chat({ messages, stream: true, max_tokens: 100 });
    expect(r.status, r.text).toBe(200);
    const h = r.headers.get('x-router-compression')!;
    const dropped = Number(/dropped-turns=(\d+)/.exec(h)![1]);
    expect(h).toMatch(/^trimmed-tool-outputs=0; dropped-turns=\d+; tokens=\d+->\d+$/);
    expect(dropped).toBeGreaterThan(0);
    expect(dropped).toBeLessThan(6);
    const sent = (chatRequests()[0]!.json as any).messages;
    expect(sent[0]).toEqual({ role: 'system', content: 'SYSTEM PROMPT' });
    expect(sent[1].role).toBe('user');
    expect(sent[1].content.startsWith(`turn ${dropped} `)).toBe(true);
    expect(sent.at(-1)).toEqual({ role: 'user', content: 'FINAL QUESTION' });
    const calls = sent.flatMap((m: any) => (m.tool_calls ?? []).map((c: any) => c.id));
    const results = sent.filter((m: any) => m.role === 'tool').map((m: any) => m.tool_call_id);
    expect(calls).toEqual(results);
    expect(r.text).toContain('data: [DONE]');
  });

  it('answers 400 context_length_exceeded when even the last turn does not fit; the upstream is not called', async () => {
    const r = await chat({ messages: [{ role: 'user', content: words(1500) }] });
    expect(r.status).toBe(400);
    expect(JSON.parse(r.text).error).toMatchObject({ code: 'context_length_exceeded', type: 'invalid_request_error' });
    expect(JSON.parse(r.text).error.message).toContain('context length of 1000');
    expect(chatRequests()).toHaveLength(0);
  });

  it('off: the same oversized request is forwarded as it is', async () => {
    await router.manage('PUT', '/api/settings/compression', { enabled: false });
    try {
      const content = words(1500);
      const r = await chat({ messages: [{ role: 'user', content }] });
      expect(r.status).toBe(200);
      expect(r.headers.get('x-router-compression')).toBeNull();
      expect((chatRequests()[0]!.json as any).messages[0].content).toBe(content);
    } finally {
      await router.manage('PUT', '/api/settings/compression', { enabled: true, toolOutputMaxTokens: 100, reserveOutputTokens: 100, safetyMarginPercent: 0 });
    }
  });
});
