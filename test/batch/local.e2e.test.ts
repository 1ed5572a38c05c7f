import { WebSocket } from 'undici';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startReceiver } from '../webhooks/helpers.js';
import { startMockUpstream, type MockUpstream } from '../mocks/upstream.js';
import { startRouter, type RouterProcess } from '../support/router-daemon.js';
import { chatLine, fileLines, jsonl, sdk, upload, userText, waitBatch } from './helpers.js';

/**
 * Batches run by router itself, end to end: the official `openai` SDK unmodified against the real daemon,
 * a mock upstream speaking OpenAI's wire format.
 */

let mock: MockUpstream;
let router: RouterProcess;
let key: string;
let keyId: string;

beforeAll(async () => {
  mock = await startMockUpstream();
  router = await startRouter();
  const created = await router.manage('POST', '/api/keys', { name: 'batch owner', scopes: ['proxy'] });
  key = created.json.key;
  keyId = created.json.id;
  await router.addConnection({ provider: 'openai', apiKey: 'sk-openai-upstream', providerSpecificData: { baseUrl: mock.openaiBase } });
  await router.addConnection({ provider: 'groq', apiKey: 'gsk-groq-upstream', providerSpecificData: { baseUrl: mock.openaiBase } });
  const combo = await router.manage('POST', '/api/combos', { name: 'batch-combo', strategy: 'priority', models: ['groq/llama-broken', 'openai/gpt-4o-mini'] });
  expect(combo.status).toBe(201);
}, 30_000);
afterEach(() => mock.reset());
afterAll(async () => {
  await router?.stop();
  await mock?.close();
});

describe('a 200-line batch across a combo with one failing target', () => {
  it('completes with the right counts, output and error files, and a priced usage row per line', async () => {
    // groq's model always fails (500): the combo fails over to OpenAI. Lines saying "reject me" get a 400
    // from OpenAI, which is not retried: the combo answers 502 combo_failed naming it (as it would to a
    // client), and those lines end in the error file.
    mock.handle((req) => {
      if (req.endpoint !== 'openai.chat') return undefined;
      if (req.model === 'llama-broken') return { type: 'status', status: 500, message: 'groq is down' };
      if (userText(req.json)?.startsWith('reject me')) return { type: 'status', status: 400, message: 'Invalid prompt' };
      return { type: 'text', text: `answer to ${userText(req.json)}` };
    });
    const lines = Array.from({ length: 200 }, (_, i) => chatLine(`req-${i}`, 'batch-combo', i % 20 === 7 ? `reject me ${i}` : `question ${i}`));
    const client = sdk(router, key);
    const file = await upload(client, jsonl(lines));
    expect(file).toMatchObject({ object: 'file', purpose: 'batch', filename: 'batch.jsonl', bytes: Buffer.byteLength(jsonl(lines)) });

    const created = await client.batches.create({ input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h', metadata: { job: 'nightly' } });
    expect(created).toMatchObject({ object: 'batch', status: 'validating', input_file_id: file.id, metadata: { job: 'nightly' } });
    expect(created.request_counts).toEqual({ total: 200, completed: 0, failed: 0 });
    const seen: number[] = [];
    const done = await waitBatch(client, created.id, (b) => {
      seen.push(b.request_counts!.completed + b.request_counts!.failed);
      return b.status === 'completed';
    });
    expect(done.request_counts).toEqual({ total: 200, completed: 190, failed: 10 });
    expect(done.completed_at).toBeGreaterThanOrEqual(done.created_at);
    // request_counts moved while the batch ran (not only at the end).
    expect(seen.some((n) => n > 0 && n < 200)).toBe(true);

    const output = await fileLines(client, done.output_file_id);
    expect(output).toHaveLength(190);
    const byId = new Map(output.map((l) => [l.custom_id, l]));
    const first = byId.get('req-0');
    expect(first).toMatchObject({ custom_id: 'req-0', error: null, response: { status_code: 200 } });
    expect(first.id).toMatch(/^batch_req_/);
    expect(first.response.body.choices[0].message.content).toBe('answer to question 0');
    expect(typeof first.response.request_id).toBe('string');
    // Output lines are in input order.
    expect(output.map((l) => l.custom_id)).toEqual(lines.filter((_, i) => i % 20 !== 7).map((l) => l.custom_id));

    const errors = await fileLines(client, done.error_file_id);
    expect(errors.map((l) => l.custom_id)).toEqual(['req-7', 'req-27', 'req-47', 'req-67', 'req-87', 'req-107', 'req-127', 'req-147', 'req-167', 'req-187']);
    expect(errors[0]).toMatchObject({ response: { status_code: 502, body: { error: { code: 'combo_failed', message: expect.stringContaining('Invalid prompt') } } }, error: null });

    // Every line was answered by OpenAI once; groq was tried until its circuit opened, then skipped.
    const openaiCalls = mock.requests.filter((r) => r.endpoint === 'openai.chat' && r.model === 'gpt-4o-mini');
    expect(openaiCalls).toHaveLength(200);
    expect(mock.requests.filter((r) => r.model === 'llama-broken').length).toBeLessThan(20);

    // A usage row per line, under the batch owner's key, priced (gpt-4o-mini has a price).
    const rows = await eventuallyRows(keyId, (r) => r.length >= 200 + 1);
    for (const line of output) {
      const row = rows.find((r) => r.traceId === line.response.request_id && r.status === 200);
      expect(row, line.custom_id).toBeDefined();
      expect(row.costUsd).toBeGreaterThan(0);
      expect(row.provider).toBe('openai');
    }
  }, 120_000);
});

describe('cancel', () => {
  it('stops sending lines; in-flight lines finish; the batch ends cancelled with what was done', async () => {
    expect((await router.manage('PATCH', '/api/settings', { batchConcurrency: 2 })).status).toBe(200);
    mock.handle((req) => (req.endpoint === 'openai.chat' ? { type: 'delay', ms: 100 } : undefined));
    const client = sdk(router, key);
    const lines = Array.from({ length: 60 }, (_, i) => chatLine(`c-${i}`, 'openai/gpt-4o-mini', `slow ${i}`));
    const file = await upload(client, jsonl(lines));
    const batch = await client.batches.create({ input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h' });
    await waitBatch(client, batch.id, (b) => b.request_counts!.completed >= 4);
    const cancelling = await client.batches.cancel(batch.id);
    expect(['cancelling', 'cancelled']).toContain(cancelling.status);
    const done = await waitBatch(client, batch.id);
    expect(done.status).toBe('cancelled');
    expect(done.cancelled_at).not.toBeNull();
    const sent = mock.requests.filter((r) => r.endpoint === 'openai.chat').length;
    expect(sent).toBeLessThan(60);
    expect(done.request_counts!.completed).toBe(sent);
    expect((await fileLines(client, done.output_file_id)).length).toBe(sent);
    await new Promise((r) => setTimeout(r, 400));
    expect(mock.requests.filter((r) => r.endpoint === 'openai.chat').length).toBe(sent);
    // A finished batch cannot be cancelled again into another state.
    expect((await client.batches.cancel(batch.id)).status).toBe('cancelled');
    await router.manage('PATCH', '/api/settings', { batchConcurrency: 8 });
  }, 60_000);
});

describe('files', () => {
  it('refuses a bad line with a 400 naming it, and a file past batchFileMaxBytes with a 413 (the limit itself passes)', async () => {
    const client = sdk(router, key);
    const bad = `${JSON.stringify(chatLine('a', 'openai/gpt-4o-mini', 'hi'))}\n{"custom_id": "b", "method": "GET"}\n`;
    const refused = await upload(client, bad).catch((e) => e);
    expect(refused.status).toBe(400);
    expect(refused.message).toContain('Line 2 of the file');

    const dup = jsonl([chatLine('same', 'openai/gpt-4o-mini', 'a'), chatLine('same', 'openai/gpt-4o-mini', 'b')]);
    expect((await upload(client, dup).catch((e) => e)).message).toContain("repeats custom_id 'same'");

    expect((await router.manage('PATCH', '/api/settings', { batchFileMaxBytes: 4096 })).status).toBe(200);
    try {
      const base = JSON.stringify(chatLine('edge', 'openai/gpt-4o-mini', ''));
      // One line padded with spaces inside the content to exactly the limit (newline included).
      const exact = `${base.replace('"content":""', `"content":"${'x'.repeat(4096 - Buffer.byteLength(base) - 1)}"`)}\n`;
      expect(Buffer.byteLength(exact)).toBe(4096);
      const ok = await upload(client, exact);
      expect(ok.bytes).toBe(4096);
      const over = `${exact.slice(0, -1)} \n`;
      expect(Buffer.byteLength(over)).toBe(4097);
      const tooBig = await upload(client, over).catch((e) => e);
      expect(tooBig.status).toBe(413);
      expect(tooBig.message).toContain('4096 bytes');
    } finally {
      await router.manage('PATCH', '/api/settings', { batchFileMaxBytes: 200_000_000 });
    }
  });

  it('takes multipart only from a caller with its key in a header (what a web page cannot send cross-origin)', async () => {
    const form = () => {
      const f = new FormData();
      f.append('purpose', 'batch');
      f.append('file', new Blob([jsonl([chatLine('g', 'openai/gpt-4o-mini', 'hi')])]), 'g.jsonl');
      return f;
    };
    // No key header (a page's form post): the guard refuses the type before anything is read.
    const anon = await fetch(`${router.url}/v1/files`, { method: 'POST', body: form() });
    expect(anon.status).toBe(415);
    // Another origin is refused whatever it carries.
    const cross = await fetch(`${router.url}/v1/files`, { method: 'POST', body: form(), headers: { authorization: `Bearer ${key}`, origin: 'https://evil.example' } });
    expect(cross.status).toBe(403);
    // Routes that did not opt in still need JSON, key or not.
    const chat = await fetch(`${router.url}/v1/chat/completions`, { method: 'POST', body: form(), headers: { authorization: `Bearer ${key}` } });
    expect(chat.status).toBe(415);
    const cancel = await fetch(`${router.url}/v1/batches/batch_nope/cancel`, { method: 'POST' });
    expect(cancel.status).toBe(415);
    // With the key: accepted; a body-less cancel too (404: no such batch).
    expect((await fetch(`${router.url}/v1/files`, { method: 'POST', body: form(), headers: { authorization: `Bearer ${key}` } })).status).toBe(200);
    expect((await fetch(`${router.url}/v1/batches/batch_nope/cancel`, { method: 'POST', headers: { authorization: `Bearer ${key}` } })).status).toBe(404);
  });

  it('lists, retrieves, serves and deletes files; another key sees none of them', async () => {
    const client = sdk(router, key);
    const text = jsonl([chatLine('x', 'openai/gpt-4o-mini', 'hello')]);
    const file = await upload(client, text, 'mine.jsonl');
    expect(await client.files.retrieve(file.id)).toMatchObject({ id: file.id, filename: 'mine.jsonl', bytes: Buffer.byteLength(text) });
    expect(await (await client.files.content(file.id)).text()).toBe(text);
    const listed = [];
    for await (const f of client.files.list()) listed.push(f.id);
    expect(listed).toContain(file.id);

    const other = sdk(router, await router.createKey());
    expect((await other.files.retrieve(file.id).catch((e) => e)).status).toBe(404);
    const otherList = [];
    for await (const f of other.files.list()) otherList.push(f.id);
    expect(otherList).toEqual([]);

    expect(await client.files.delete(file.id)).toMatchObject({ id: file.id, deleted: true });
    expect((await client.files.retrieve(file.id).catch((e) => e)).status).toBe(404);
  });
});

describe('scopes', () => {
  it("runs each line under the owner's key: a line outside its model scope ends in the error file with a 403", async () => {
    const scoped = await router.createKey(['proxy', 'model:openai/*']);
    const client = sdk(router, scoped);
    const file = await upload(client, jsonl([chatLine('allowed', 'openai/gpt-4o-mini', 'hi'), chatLine('refused', 'groq/llama-3', 'hi')]));
    const batch = await client.batches.create({ input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h' });
    const done = await waitBatch(client, batch.id);
    expect(done.request_counts).toEqual({ total: 2, completed: 1, failed: 1 });
    const [err] = await fileLines(client, done.error_file_id);
    expect(err).toMatchObject({ custom_id: 'refused', response: { status_code: 403 } });
    expect(mock.requests.filter((r) => r.model === 'llama-3')).toHaveLength(0);
  });

  it('refuses a batch whose endpoint the key may not call, and a key without the proxy scope', async () => {
    const pathKey = await router.createKey(['proxy', 'path:/v1/files', 'path:/v1/batches']);
    const client = sdk(router, pathKey);
    const file = await upload(client, jsonl([chatLine('a', 'openai/gpt-4o-mini', 'hi')]));
    const refused = await client.batches.create({ input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h' }).catch((e) => e);
    expect(refused.status).toBe(403);
    const manageOnly = sdk(router, await router.createKey(['manage']));
    expect((await manageOnly.batches.list().catch((e) => e)).status).toBe(403);
  });
});

describe('batch list and management routes', () => {
  it('pages /v1/batches like OpenAI, filters /api/batches by status, deletes one and all finished', async () => {
    const client = sdk(router, key);
    const file = await upload(client, jsonl([chatLine('m', 'openai/gpt-4o-mini', 'hi')]));
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      const b = await client.batches.create({ input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h' });
      ids.push(b.id);
      await waitBatch(client, b.id);
    }
    const page = await client.batches.list({ limit: 2 });
    expect(page.data.map((b) => b.id)).toEqual([ids[2], ids[1]]);
    expect(page.hasNextPage()).toBe(true);
    const next = await page.getNextPage();
    expect(next.data[0]!.id).toBe(ids[0]);

    const completed = await router.manage('GET', '/api/batches?status=completed');
    expect(completed.json.batches.map((b: any) => b.id)).toEqual(expect.arrayContaining(ids));
    expect((await router.manage('GET', '/api/batches?status=in_progress')).json.batches).toEqual([]);
    expect((await router.manage('GET', '/api/batches?status=bogus')).status).toBe(400);

    const one = await client.batches.retrieve(ids[0]!);
    expect((await router.manage('DELETE', `/api/batches/${ids[0]}`)).status).toBe(200);
    expect((await client.batches.retrieve(ids[0]!).catch((e) => e)).status).toBe(404);
    expect((await client.files.retrieve(one.output_file_id!).catch((e) => e)).status).toBe(404);

    const bulk = await router.manage('DELETE', '/api/batches/completed');
    expect(bulk.json.deleted).toBeGreaterThanOrEqual(2);
    expect((await router.manage('GET', '/api/batches?status=completed')).json.batches).toEqual([]);
  });
});

describe('other endpoints', () => {
  it('runs /v1/embeddings and /v1/responses batches through their own routes', async () => {
    const client = sdk(router, key);
    const emb = await upload(client, jsonl([0, 1].map((i) => ({ custom_id: `e${i}`, method: 'POST', url: '/v1/embeddings', body: { model: 'openai/text-embedding-3-small', input: `text ${i}` } }))));
    const e = await waitBatch(client, (await client.batches.create({ input_file_id: emb.id, endpoint: '/v1/embeddings', completion_window: '24h' })).id);
    expect(e.request_counts).toEqual({ total: 2, completed: 2, failed: 0 });
    const [first] = await fileLines(client, e.output_file_id);
    expect(first.response.body).toMatchObject({ object: 'list', data: [{ object: 'embedding' }] });
    expect(mock.requests.filter((r) => r.endpoint === 'openai.embeddings')).toHaveLength(2);

    const resp = await upload(client, jsonl([{ custom_id: 'r0', method: 'POST', url: '/v1/responses', body: { model: 'openai/gpt-4o-mini', input: 'Say hi' } }]));
    const r = await waitBatch(client, (await client.batches.create({ input_file_id: resp.id, endpoint: '/v1/responses', completion_window: '24h' })).id);
    expect(r.request_counts).toEqual({ total: 1, completed: 1, failed: 0 });
    const [out] = await fileLines(client, r.output_file_id);
    expect(out.response.body).toMatchObject({ object: 'response', status: 'completed' });

    // A line whose url is not the batch's endpoint is refused at creation, naming the line.
    const mixed = await upload(client, jsonl([chatLine('c', 'openai/gpt-4o-mini', 'x')]));
    const refused = await client.batches.create({ input_file_id: mixed.id, endpoint: '/v1/embeddings', completion_window: '24h' }).catch((err) => err);
    expect(refused.status).toBe(400);
    expect(refused.message).toContain("Line 1 of the file has url '/v1/chat/completions'");
  }, 30_000);
});

describe('rate awareness', () => {
  it('waits out 429s (Retry-After) instead of failing the lines', async () => {
    // The upstream answers 429 with retry-after 1 to the first three calls, then serves.
    let refusals = 0;
    const times: number[] = [];
    mock.handle((req) => {
      if (req.endpoint !== 'openai.chat') return undefined;
      times.push(Date.now());
      return refusals++ < 3 ? { type: 'status', status: 429, message: 'Slow down', headers: { 'retry-after': '1' } } : undefined;
    });
    const client = sdk(router, key);
    const file = await upload(client, jsonl(Array.from({ length: 6 }, (_, i) => chatLine(`r-${i}`, 'openai/gpt-4o-mini', `q ${i}`))));
    const batch = await client.batches.create({ input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h' });
    const done = await waitBatch(client, batch.id);
    expect(done.request_counts).toEqual({ total: 6, completed: 6, failed: 0 });
    expect(done.error_file_id).toBeNull();
    // After the first refusals the model was paused about a second before more lines went out.
    expect(times.at(-1)! - times[0]!).toBeGreaterThanOrEqual(900);
  }, 30_000);
});

describe('events', () => {
  it('batch.completed reaches webhooks and the live feed', async () => {
    const rx = await startReceiver();
    const ws = new WebSocket(`ws://127.0.0.1:${router.port}/api/live`, { headers: { 'x-router-cli-token': router.cliToken } } as never);
    const live: any[] = [];
    ws.addEventListener('message', (ev) => live.push(JSON.parse(String(ev.data))));
    await new Promise((r) => ws.addEventListener('open', r));
    try {
      expect((await router.manage('PATCH', '/api/settings', { allowPrivateWebhookDestinations: true })).status).toBe(200);
      const hook = await router.manage('POST', '/api/webhooks', { url: rx.url, events: ['batch.completed', 'batch.failed'] });
      expect(hook.status).toBe(201);
      const client = sdk(router, key);
      const file = await upload(client, jsonl([chatLine('e', 'openai/gpt-4o-mini', 'hi')]));
      const batch = await client.batches.create({ input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h' });
      await rx.waitFor(1, 10_000);
      const body = JSON.parse(rx.requests[0]!.body);
      expect(body).toMatchObject({ event: 'batch.completed', data: { batch_id: batch.id, status: 'completed', api_key_id: keyId, total: 1, completed: 1, failed: 0, mode: 'local' } });
      expect(live.find((m) => m.type === 'event' && m.event === 'batch.completed')).toMatchObject({ data: { batch_id: batch.id } });
      await router.manage('DELETE', `/api/webhooks/${hook.json.id}`);
    } finally {
      ws.close();
      await rx.close();
    }
  }, 30_000);
});

describe('cancel event', () => {
  it('a cancelled batch emits batch.cancelled to webhooks and the live feed (not batch.failed)', async () => {
    const rx = await startReceiver();
    const ws = new WebSocket(`ws://127.0.0.1:${router.port}/api/live`, { headers: { 'x-router-cli-token': router.cliToken } } as never);
    const live: any[] = [];
    ws.addEventListener('message', (ev) => live.push(JSON.parse(String(ev.data))));
    await new Promise((r) => ws.addEventListener('open', r));
    expect((await router.manage('PATCH', '/api/settings', { allowPrivateWebhookDestinations: true, batchConcurrency: 1 })).status).toBe(200);
    const hook = await router.manage('POST', '/api/webhooks', { url: rx.url, events: ['batch.cancelled', 'batch.failed'] });
    expect(hook.status).toBe(201);
    try {
      mock.handle((req) => (req.endpoint === 'openai.chat' ? { type: 'delay', ms: 150 } : undefined));
      const client = sdk(router, key);
      const file = await upload(client, jsonl(Array.from({ length: 30 }, (_, i) => chatLine(`k-${i}`, 'openai/gpt-4o-mini', `k ${i}`))));
      const batch = await client.batches.create({ input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h' });
      await waitBatch(client, batch.id, (b) => b.request_counts!.completed >= 1);
      await client.batches.cancel(batch.id);
      const done = await waitBatch(client, batch.id);
      expect(done.status).toBe('cancelled');
      await rx.waitFor(1, 10_000);
      expect(rx.requests[0]!.headers['x-webhook-event']).toBe('batch.cancelled');
      const body = JSON.parse(rx.requests[0]!.body);
      expect(body).toMatchObject({
        event: 'batch.cancelled',
        data: { batch_id: batch.id, status: 'cancelled', api_key_id: keyId, mode: 'local', total: 30, completed: done.request_counts!.completed, failed: 0, output_file_id: done.output_file_id },
      });
      await eventuallyTrue(() => live.some((m) => m.type === 'event' && m.event === 'batch.cancelled'));
      expect(live.find((m) => m.type === 'event' && m.event === 'batch.cancelled')).toMatchObject({ data: { batch_id: batch.id, status: 'cancelled' } });
      // No batch.failed for a cancel.
      await new Promise((r) => setTimeout(r, 300));
      expect(rx.requests.map((r) => JSON.parse(r.body).event)).toEqual(['batch.cancelled']);
    } finally {
      await router.manage('DELETE', `/api/webhooks/${hook.json.id}`);
      await router.manage('PATCH', '/api/settings', { batchConcurrency: 8 });
      ws.close();
      await rx.close();
    }
  }, 30_000);
});

async function eventuallyTrue(check: () => boolean): Promise<void> {
  const until = Date.now() + 5_000;
  while (!check()) {
    if (Date.now() > until) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function eventuallyRows(keyId: string, ready: (rows: any[]) => boolean): Promise<any[]> {
  const until = Date.now() + 10_000;
  for (;;) {
    const r = await router.manage('GET', `/api/logs?key=${keyId}&limit=500`);
    if (ready(r.json.logs) || Date.now() > until) return r.json.logs;
    await new Promise((res) => setTimeout(res, 100));
  }
}
