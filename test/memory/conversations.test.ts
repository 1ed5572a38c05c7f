import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startMockUpstream, type MockUpstream } from '../mocks/upstream.js';
import { startApp, writeStaticModel, type TestApp } from './helpers.js';

let t: TestApp;
let mock: MockUpstream;
let modelDir: string;
let key: { id: string; key: string };
let plainKey: { id: string; key: string };

async function newKey(name: string) {
  const r = await t.request('POST', '/api/keys', { name, scopes: ['proxy'] });
  expect(r.status).toBe(201);
  return { id: r.json.id as string, key: r.json.key as string };
}

/** A client call through the real proxy route (auth, planning, stages, codecs, upstream). */
async function client(path: string, k: string, body: unknown, extra: Record<string, string> = {}) {
  return t.request('POST', path, body, { authorization: `Bearer ${k}`, 'x-router-cli-token': '', ...extra });
}

beforeAll(async () => {
  mock = await startMockUpstream();
  modelDir = mkdtempSync(join(tmpdir(), 'router-static-conv-'));
  writeStaticModel(modelDir);
  t = await startApp();
  for (const provider of ['openai', 'anthropic']) {
    const c = await t.request('POST', '/api/providers', { provider, apiKey: `sk-${provider}-conv-0123456789`, providerSpecificData: { baseUrl: provider === 'openai' ? mock.openaiBase : mock.anthropicBase } });
    expect(c.status).toBe(201);
  }
  await t.request('PUT', '/api/memory/settings', { embeddingOrder: ['static'], staticModelPath: modelDir });
  key = await newKey('memory-user');
  plainKey = await newKey('no-memory');
  await t.request('POST', '/api/memory', { key: 'dog', content: 'The user has a golden retriever called Max.', apiKeyId: key.id });
  await t.request('POST', '/api/memory', { key: 'editor', content: 'Writes code in Neovim.', apiKeyId: key.id });
  await t.request('POST', '/api/memory', { key: 'house rule', content: 'Answers must be in British English.' }); // global pool
  await t.request('POST', '/api/memory', { key: 'other dog', content: 'Another user has a poodle.', apiKeyId: plainKey.id });
});
afterEach(() => mock.reset());
afterAll(async () => {
  t.close();
  await mock.close();
  rmSync(modelDir, { recursive: true, force: true });
});

const systemText = (msg: any): string => (typeof msg.content === 'string' ? msg.content : msg.content.map((p: any) => p.text).join('\n'));

describe('injection into conversations', () => {
  it('off by default: the upstream receives the client body untouched', async () => {
    const body = { model: 'openai/gpt-4o', messages: [{ role: 'user', content: 'What pet do I have?' }] };
    const r = await client('/v1/chat/completions', plainKey.key, body);
    expect(r.status).toBe(200);
    const up = mock.requests.at(-1)!;
    expect(up.json.messages).toEqual(body.messages);
    expect(r.headers.get('x-router-memory')).toBeNull();
  });

  it('chat completions: a leading system block with relevant memories; the client messages untouched', async () => {
    await t.request('PUT', `/api/memory/keys/${key.id}/settings`, { inject: true, injectMaxTokens: 500 });
    const messages = [
      { role: 'system', content: 'You are terse.' },
      { role: 'user', content: 'Hi' },
      { role: 'assistant', content: 'Hello.' },
      { role: 'user', content: 'What pet do I have? Any dog?' },
    ];
    const sent = JSON.parse(JSON.stringify(messages));
    const r = await client('/v1/chat/completions', key.key, { model: 'openai/gpt-4o', messages });
    expect(r.status, JSON.stringify(r.json)).toBe(200);
    expect(r.headers.get('x-router-memory')).toMatch(/^injected=[1-9]/);
    const up = mock.requests.filter((x) => x.endpoint === 'openai.chat').at(-1)!;
    const [system, ...rest] = up.json.messages;
    expect(system.role).toBe('system');
    const parts = Array.isArray(system.content) ? system.content.map((p: any) => p.text) : [system.content];
    expect(parts[0]).toMatch(/^<memories>\n/);
    expect(parts[0]).toContain('[factual] dog: The user has a golden retriever called Max.');
    expect(parts[0]).not.toContain('poodle'); // another key's memory
    expect(parts.at(-1)).toBe('You are terse.'); // the client's own system prompt follows, unchanged
    expect(rest).toEqual(sent.slice(1));
    // A real retrieval counts hits (previews do not).
    const dog = (await t.request('GET', `/api/memory?apiKeyId=${key.id}`)).json.data.find((m: any) => m.key === 'dog');
    expect(dog.hitCount).toBe(1);
  });

  it('respects the key budget and scope settings', async () => {
    await t.request('PUT', `/api/memory/keys/${key.id}/settings`, { injectMaxTokens: 1 });
    await client('/v1/chat/completions', key.key, { model: 'openai/gpt-4o', messages: [{ role: 'user', content: 'dog?' }] });
    expect(mock.requests.at(-1)!.json.messages).toEqual([{ role: 'user', content: 'dog?' }]);
    await t.request('PUT', `/api/memory/keys/${key.id}/settings`, { injectMaxTokens: 1000, scope: 'global' });
    await client('/v1/chat/completions', key.key, { model: 'openai/gpt-4o', messages: [{ role: 'user', content: 'Which English spelling? dog' }] });
    const sys = systemText(mock.requests.at(-1)!.json.messages[0]);
    expect(sys).toContain('British English');
    expect(sys).not.toContain('golden retriever');
    await t.request('PUT', `/api/memory/keys/${key.id}/settings`, { scope: 'both' });
  });

  it('anthropic messages, native and translated to an OpenAI upstream, get the block', async () => {
    await t.request('PUT', `/api/memory/keys/${key.id}/settings`, { inject: true, injectMaxTokens: 1000, scope: 'both' });
    const body = { model: 'anthropic/claude-sonnet-4', max_tokens: 100, system: 'Be brief.', messages: [{ role: 'user', content: 'Tell me about my dog' }] };
    const r = await client('/v1/messages', key.key, body, { 'anthropic-version': '2023-06-01' });
    expect(r.status, JSON.stringify(r.json)).toBe(200);
    const up = mock.requests.filter((x) => x.endpoint === 'anthropic.messages').at(-1)!;
    const sys = Array.isArray(up.json.system) ? up.json.system.map((p: any) => p.text) : [up.json.system];
    expect(sys[0]).toContain('golden retriever');
    expect(sys.at(-1)).toBe('Be brief.');
    expect(up.json.messages).toEqual(body.messages);
    // Translated: an Anthropic client calling an OpenAI model.
    const tr = await client('/v1/messages', key.key, { ...body, model: 'openai/gpt-4o' }, { 'anthropic-version': '2023-06-01' });
    expect(tr.status, JSON.stringify(tr.json)).toBe(200);
    const chat = mock.requests.filter((x) => x.endpoint === 'openai.chat').at(-1)!;
    expect(systemText(chat.json.messages[0])).toContain('golden retriever');
    expect(systemText(chat.json.messages[0])).toMatch(/Be brief\.$/);
    expect(chat.json.messages.slice(1)).toEqual([{ role: 'user', content: 'Tell me about my dog' }]);
  });

  it('responses API and streaming chat get the block too', async () => {
    await t.request('PUT', `/api/memory/keys/${key.id}/settings`, { inject: true, injectMaxTokens: 1000, scope: 'both' });
    const r = await client('/v1/responses', key.key, { model: 'openai/gpt-4o', instructions: 'Short answers.', input: 'What editor do I use for code?' });
    expect(r.status, JSON.stringify(r.json)).toBe(200);
    const up = mock.requests.filter((x) => x.endpoint === 'openai.responses' || x.endpoint === 'openai.chat').at(-1)!;
    expect(JSON.stringify(up.json)).toContain('Writes code in Neovim.');
    expect(JSON.stringify(up.json)).toContain('Short answers.');

    const s = await client('/v1/chat/completions', key.key, { model: 'openai/gpt-4o', stream: true, messages: [{ role: 'user', content: 'my dog?' }] });
    expect(s.status).toBe(200);
    expect(String(s.json)).toContain('data:');
    expect(systemText(mock.requests.at(-1)!.json.messages[0])).toContain('golden retriever');
    expect(mock.requests.at(-1)!.json.messages.at(-1)).toEqual({ role: 'user', content: 'my dog?' });
  });

  it('a retrieval failure never breaks the conversation', async () => {
    await t.request('PUT', `/api/memory/keys/${key.id}/settings`, { inject: true });
    const memory = t.services.memory;
    const orig = memory.retrieve.bind(memory);
    memory.retrieve = async () => {
      throw new Error('engine broken');
    };
    try {
      const r = await client('/v1/chat/completions', key.key, { model: 'openai/gpt-4o', messages: [{ role: 'user', content: 'dog' }] });
      expect(r.status).toBe(200);
      expect(mock.requests.at(-1)!.json.messages).toEqual([{ role: 'user', content: 'dog' }]);
    } finally {
      memory.retrieve = orig;
    }
  });
});

describe('extraction from conversations', () => {
  it('heuristic extraction stores facts and the exchange, after the reply', async () => {
    const k = await newKey('extractor');
    await t.request('PUT', `/api/memory/keys/${k.id}/settings`, { extract: true });
    const r = await client('/v1/chat/completions', k.key, {
      model: 'openai/gpt-4o',
      messages: [{ role: 'user', content: 'My favourite editor is Helix. I prefer tabs over spaces. What is 2+2?' }],
    }, { 'x-router-session': 'conv-42' });
    expect(r.status).toBe(200);
    await t.services.memory.idle();
    const list = (await t.request('GET', `/api/memory?apiKeyId=${k.id}`)).json.data;
    expect(list).toContainEqual(expect.objectContaining({ type: 'factual', key: 'favourite editor', content: 'My favourite editor is Helix.' }));
    expect(list).toContainEqual(expect.objectContaining({ type: 'factual', content: 'I prefer tabs over spaces.' }));
    expect(list.some((m: any) => m.content.includes('2+2') && m.type !== 'episodic')).toBe(false);
    const episode = list.find((m: any) => m.type === 'episodic');
    expect(episode.content).toContain('User: My favourite editor is Helix.');
    expect(episode.content).toContain('Assistant: Hello from the mock.');
    expect(episode.metadata).toMatchObject({ source: 'extraction', model: 'openai/gpt-4o' });
    expect(list.filter((m: any) => m.sessionId === 'conv-42')).toHaveLength(3);
    // The same fact again is not duplicated; a changed fact under the same key is updated.
    await client('/v1/chat/completions', k.key, { model: 'openai/gpt-4o', messages: [{ role: 'user', content: 'My favourite editor is Zed.' }] });
    await t.services.memory.idle();
    const facts = (await t.request('GET', `/api/memory?apiKeyId=${k.id}&type=factual`)).json.data.filter((m: any) => m.key === 'favourite editor');
    expect(facts).toHaveLength(1);
    expect(facts[0].content).toBe('My favourite editor is Zed.');
  });

  it('model extraction runs in the background: a slow extraction model never delays the reply', async () => {
    const k = await newKey('model-extractor');
    await t.request('PUT', `/api/memory/keys/${k.id}/settings`, { extract: true });
    await t.request('PUT', '/api/memory/settings', { extractionModel: 'openai/extractor-model', extractEpisodes: false });
    try {
      mock.handle((req) =>
        req.model === 'extractor-model'
          ? {
              type: 'delay',
              ms: 1500,
              then: { type: 'text', text: '```json\n{"memories":[{"type":"procedural","key":"reply language","content":"Always answer in Portuguese."}]}\n```' },
            }
          : undefined,
      );
      const t0 = Date.now();
      const r = await client('/v1/chat/completions', k.key, { model: 'openai/gpt-4o', messages: [{ role: 'user', content: 'Please always answer me in Portuguese from now on.' }] });
      const took = Date.now() - t0;
      expect(r.status).toBe(200);
      expect(took).toBeLessThan(1000);
      expect((await t.request('GET', `/api/memory?apiKeyId=${k.id}`)).json.total).toBe(0);
      await t.services.memory.idle();
      const list = (await t.request('GET', `/api/memory?apiKeyId=${k.id}`)).json.data;
      expect(list).toEqual([expect.objectContaining({ type: 'procedural', key: 'reply language', content: 'Always answer in Portuguese.' })]);
      const call = mock.requests.find((x) => x.model === 'extractor-model')!;
      expect(JSON.stringify(call.json)).toContain('Please always answer me in Portuguese from now on.');
    } finally {
      await t.request('PUT', '/api/memory/settings', { extractionModel: null, extractEpisodes: true });
    }
  });
});

describe('summarization of old episodic memories', () => {
  it('folds old episodes into a semantic summary written by the configured model; originals archived', async () => {
    const scope = 'summary-scope';
    const ids: string[] = [];
    for (const [i, text] of ['Discussed the Lisbon move.', 'Planned the kitchen renovation budget.', 'Chose oak tiles for the floor.'].entries()) {
      const r = await t.request('POST', '/api/memory', { type: 'episodic', key: `exchange ${i}`, content: text, apiKeyId: scope, sessionId: 's1' });
      ids.push(r.json.id);
    }
    const fresh = await t.request('POST', '/api/memory', { type: 'episodic', key: 'today', content: 'Talked about tennis today.', apiKeyId: scope, sessionId: 's1' });
    t.services.db.prepare('UPDATE memories SET created_at = ? WHERE id IN (SELECT value FROM json_each(?))').run('2020-01-01T00:00:00.000Z', JSON.stringify(ids));
    await t.request('PUT', '/api/memory/settings', { summarizationModel: 'openai/summarizer' });
    mock.handle((req) => (req.model === 'summarizer' ? { type: 'text', text: 'Moving to Lisbon; renovating the kitchen with oak floor tiles on a budget.' } : undefined));
    const dry = await t.request('POST', '/api/memory/summarize', { apiKeyId: scope, dryRun: true });
    expect(dry.json).toEqual({ summaries: [], archived: 0, groups: [{ sessionId: 's1', count: 3 }] });
    expect(mock.requests.some((r) => r.model === 'summarizer')).toBe(false);
    const r = await t.request('POST', '/api/memory/summarize', { apiKeyId: scope, olderThanDays: 7 });
    expect(r.status, JSON.stringify(r.json)).toBe(200);
    expect(r.json.archived).toBe(3);
    expect(r.json.summaries).toHaveLength(1);
    const summary = r.json.summaries[0];
    expect(summary).toMatchObject({ type: 'semantic', sessionId: 's1', apiKeyId: scope, content: 'Moving to Lisbon; renovating the kitchen with oak floor tiles on a budget.' });
    expect(summary.metadata.summaryOf).toEqual(ids);
    const call = mock.requests.find((x) => x.model === 'summarizer')!;
    expect(JSON.stringify(call.json)).toContain('Chose oak tiles for the floor.');
    expect(JSON.stringify(call.json)).not.toContain('tennis today');
    const list = (await t.request('GET', `/api/memory?apiKeyId=${scope}&type=episodic`)).json.data;
    expect(list.filter((m: any) => m.archived).map((m: any) => m.id).sort()).toEqual([...ids].sort());
    expect(list.find((m: any) => m.id === fresh.json.id).archived).toBe(false);
    const p = (await t.request('POST', '/api/memory/retrieve-preview', { query: 'oak tiles kitchen', apiKeyId: scope })).json;
    expect(p.memories[0].id).toBe(summary.id);
    expect(p.memories.map((m: any) => m.id)).not.toEqual(expect.arrayContaining([ids[2]]));
    // A failing model is a 502 and archives nothing.
    mock.reset();
    mock.handle((req) => (req.model === 'summarizer' ? { type: 'status', status: 500 } : undefined));
    const more = await t.request('POST', '/api/memory', { type: 'episodic', key: 'x', content: 'old one', apiKeyId: scope });
    const more2 = await t.request('POST', '/api/memory', { type: 'episodic', key: 'y', content: 'old two', apiKeyId: scope });
    t.services.db.prepare('UPDATE memories SET created_at = ? WHERE id IN (?, ?, ?)').run('2020-01-01T00:00:00.000Z', more.json.id, more2.json.id, fresh.json.id);
    const fail = await t.request('POST', '/api/memory/summarize', { apiKeyId: scope });
    expect(fail.status).toBe(502);
    expect((await t.request('GET', `/api/memory/${more.json.id}`)).json.archived).toBe(false);
  });
});
