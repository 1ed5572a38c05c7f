/**
 * Request hooks (/api/middleware/hooks) through the real daemon and the mock upstreams: actions reach the
 * upstream request, run in order, match by route/model/provider/key, tag the request log and show in the
 * traffic capture; invalid definitions are refused with 400.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startProxyEnv, type ProxyEnv } from '../support/proxy-env.js';

let env: ProxyEnv;
let betaKey: string;

beforeAll(async () => {
  env = await startProxyEnv([
    { provider: 'openai', apiKey: 'sk-upstream-openai' },
    { provider: 'anthropic', apiKey: 'sk-ant-upstream' },
  ]);
  const r = await env.router.manage('POST', '/api/keys', { name: 'beta', scopes: ['proxy'] });
  expect(r.status).toBe(201);
  betaKey = r.json.key;
}, 60_000);
afterEach(async () => {
  env.mock.reset();
  const list = await env.router.manage('GET', '/api/middleware/hooks');
  for (const h of list.json.hooks) await env.router.manage('DELETE', `/api/middleware/hooks/${h.id}`);
});
afterAll(async () => {
  await env?.stop();
});

async function addHook(def: Record<string, unknown>) {
  const r = await env.router.manage('POST', '/api/middleware/hooks', def);
  expect(r.status, JSON.stringify(r.json)).toBe(201);
  return r.json;
}

async function chat(body: Record<string, unknown> = {}, key = env.key) {
  const res = await fetch(`${env.router.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'openai/gpt-4o', messages: [{ role: 'user', content: 'hi' }], ...body }),
  });
  return { status: res.status, headers: res.headers, text: await res.text() };
}

async function messages(key = env.key) {
  const res = await fetch(`${env.router.url}/v1/messages`, {
    method: 'POST',
    headers: { 'x-api-key': key, 'anthropic-version': '2023-06-01', 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'anthropic/claude-sonnet-4-5', max_tokens: 50, messages: [{ role: 'user', content: 'hi' }] }),
  });
  return { status: res.status, headers: res.headers, text: await res.text() };
}

async function logRow(traceId: string) {
  const r = await env.router.manage('GET', '/api/logs?limit=50');
  return (r.json.logs as Array<{ traceId: string; notes: string | null }>).find((l) => l.traceId === traceId);
}

describe('request hooks', () => {
  it('apply in order: a later hook overrides an earlier one; notes list them in run order; re-ordering changes the result', async () => {
    await addHook({ name: 'second', order: 20, actions: [{ type: 'set_header', name: 'X-Team', value: 'b' }, { type: 'tag', tag: 'two' }] });
    const first = await addHook({ name: 'first', order: 10, actions: [{ type: 'set_header', name: 'X-Team', value: 'a' }, { type: 'tag', tag: 'one' }] });
    const r = await chat();
    expect(r.status, r.text).toBe(200);
    expect(env.mock.requests.at(-1)!.headers['x-team']).toBe('b');
    const row = await logRow(r.headers.get('x-router-trace-id')!);
    expect(JSON.parse(row!.notes!)).toMatchObject({ hooks: ['first', 'second'], tags: ['one', 'two'] });

    const p = await env.router.manage('PATCH', `/api/middleware/hooks/${first.id}`, { order: 30 });
    expect(p.status, JSON.stringify(p.json)).toBe(200);
    const list = await env.router.manage('GET', '/api/middleware/hooks');
    expect(list.json.hooks.map((h: { name: string }) => h.name)).toEqual(['second', 'first']);
    const r2 = await chat();
    expect(env.mock.requests.at(-1)!.headers['x-team']).toBe('a');
    expect(JSON.parse((await logRow(r2.headers.get('x-router-trace-id')!))!.notes!).hooks).toEqual(['second', 'first']);
  });

  it('rewrites the model, drops a field, sets a field, adds a reply header; the upstream keeps its credential', async () => {
    await addHook({
      name: 'shape',
      actions: [
        { type: 'rewrite_model', to: 'gpt-4o-mini' },
        { type: 'drop_field', field: 'temperature' },
        { type: 'set_field', field: 'service_tier', value: 'flex' },
        { type: 'reply_header', name: 'x-hooked', value: 'yes' },
      ],
    });
    const r = await chat({ temperature: 0.3 });
    expect(r.status, r.text).toBe(200);
    expect(r.headers.get('x-hooked')).toBe('yes');
    const sent = env.mock.requests.at(-1)!;
    expect(sent.model).toBe('gpt-4o-mini');
    expect(sent.json).not.toHaveProperty('temperature');
    expect((sent.json as Record<string, unknown>).service_tier).toBe('flex');
    expect(sent.headers.authorization).toBe('Bearer sk-upstream-openai');
  });

  it('a disabled hook does nothing; removing a header another hook set', async () => {
    await addHook({ name: 'off', enabled: false, actions: [{ type: 'set_header', name: 'x-off', value: '1' }] });
    await addHook({ name: 'set', order: 1, actions: [{ type: 'set_header', name: 'x-tmp', value: '1' }, { type: 'set_header', name: 'x-keep', value: '1' }] });
    await addHook({ name: 'unset', order: 2, actions: [{ type: 'remove_header', name: 'x-tmp' }] });
    const r = await chat();
    expect(r.status).toBe(200);
    const h = env.mock.requests.at(-1)!.headers;
    expect(h['x-off']).toBeUndefined();
    expect(h['x-tmp']).toBeUndefined();
    expect(h['x-keep']).toBe('1');
  });

  it('matches by API key (name or id), provider and route', async () => {
    await addHook({ name: 'by-key', match: { key: 'beta' }, actions: [{ type: 'set_header', name: 'x-by-key', value: '1' }] });
    await addHook({ name: 'by-provider', match: { provider: 'anthropic' }, actions: [{ type: 'set_header', name: 'x-by-provider', value: '1' }] });
    await addHook({ name: 'by-route', match: { route: '/v1/chat/*' }, actions: [{ type: 'set_header', name: 'x-by-route', value: '1' }] });
    await addHook({ name: 'by-model', match: { model: 'claude-*' }, actions: [{ type: 'set_header', name: 'x-by-model', value: '1' }] });

    await chat({}, betaKey);
    let h = env.mock.requests.at(-1)!.headers;
    expect([h['x-by-key'], h['x-by-provider'], h['x-by-route'], h['x-by-model']]).toEqual(['1', undefined, '1', undefined]);

    await chat();
    h = env.mock.requests.at(-1)!.headers;
    expect([h['x-by-key'], h['x-by-provider'], h['x-by-route'], h['x-by-model']]).toEqual([undefined, undefined, '1', undefined]);

    const m = await messages();
    expect(m.status, m.text).toBe(200);
    h = env.mock.requests.at(-1)!.headers;
    expect(env.mock.requests.at(-1)!.endpoint).toBe('anthropic.messages');
    expect([h['x-by-key'], h['x-by-provider'], h['x-by-route'], h['x-by-model']]).toEqual([undefined, '1', undefined, '1']);
  });

  it('the traffic capture shows the hooked upstream request', async () => {
    await env.router.manage('PATCH', '/api/settings', { captureTraffic: true });
    try {
      await addHook({ name: 'cap', actions: [{ type: 'set_header', name: 'x-captured', value: 'v' }] });
      const r = await chat();
      const trace = await env.router.manage('GET', `/api/logs/traces/${r.headers.get('x-router-trace-id')}`);
      expect(trace.status, JSON.stringify(trace.json)).toBe(200);
      expect(JSON.stringify(trace.json.upstream.request.headers)).toContain('x-captured');
      expect(trace.json.notes).toMatchObject({ hooks: ['cap'] });
    } finally {
      await env.router.manage('PATCH', '/api/settings', { captureTraffic: false });
    }
  });

  it('refuses invalid definitions with 400 and the standard error body', async () => {
    const bad = [
      { name: 'auth', actions: [{ type: 'set_header', name: 'Authorization', value: 'Bearer x' }] },
      { name: 'xkey', actions: [{ type: 'remove_header', name: 'x-api-key' }] },
      { name: 'code', actions: [{ type: 'eval', code: 'process.exit()' }] },
      { name: 'model-field', actions: [{ type: 'drop_field', field: 'model' }] },
      { name: 'nested', actions: [{ type: 'drop_field', field: 'a.b' }] },
      { name: 'none', actions: [] },
      { name: 'bad name!', actions: [{ type: 'tag', tag: 't' }] },
      { name: 'extra', actions: [{ type: 'tag', tag: 't' }], script: 'x' },
      { name: 'ctl', actions: [{ type: 'set_header', name: 'x-a', value: 'a\r\nb: c' }] },
      { name: 'big', actions: [{ type: 'set_field', field: 'metadata', value: { blob: 'x'.repeat(20_000) } }] },
    ];
    for (const def of bad) {
      const r = await env.router.manage('POST', '/api/middleware/hooks', def);
      expect(r.status, def.name).toBe(400);
      expect(r.json.error?.message, def.name).toBeTruthy();
    }
    expect((await env.router.manage('GET', '/api/middleware/hooks')).json.hooks).toEqual([]);
    await addHook({ name: 'dup', actions: [{ type: 'tag', tag: 't' }] });
    expect((await env.router.manage('POST', '/api/middleware/hooks', { name: 'dup', actions: [{ type: 'tag', tag: 't' }] })).status).toBe(409);
    expect((await env.router.manage('GET', '/api/middleware/hooks/nope')).status).toBe(404);
  });
});
