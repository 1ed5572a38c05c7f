/**
 * Moderation through router (issue 17 item 3), a real daemon and the official `openai` SDK unmodified:
 * text and image inputs to OpenAI and an OpenAI-compatible node, the default model, failover in a combo,
 * a key's model scope, a usage row (free: cost 0), and bad input.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { ProxyEnv } from '../../support/proxy-env.js';
import { combo, rowsOf, sdk, startMediaEnv, traceOf } from './helpers.js';

let env: ProxyEnv;

beforeAll(async () => {
  env = await startMediaEnv();
});
afterEach(() => env.mock.reset());
afterAll(async () => {
  await env?.stop();
});

describe('POST /v1/moderations', () => {
  it('text inputs to OpenAI: one result per input, the upstream reply as written; a row that costs nothing', async () => {
    const { data, response } = await sdk(env).moderations.create({ model: 'openai/omni-moderation-latest', input: ['a nice day', 'I will kill the process'] }).withResponse();
    expect(data.results.map((r) => r.flagged)).toEqual([false, true]);
    expect(data.results[1]!.categories.violence).toBe(true);
    expect(env.mock.requests[0]!.json).toEqual({ model: 'omni-moderation-latest', input: ['a nice day', 'I will kill the process'] });
    const [row] = await rowsOf(env, traceOf(response));
    expect(row).toMatchObject({ endpoint: '/v1/moderations', provider: 'openai', model: 'omni-moderation-latest', status: 200, costUsd: 0 });
    expect(JSON.parse(row.notes)).toMatchObject({ flagged: true, inputs: 2 });
  });

  it('image and text parts; no model means openai/omni-moderation-latest', async () => {
    const reply = await sdk(env).moderations.create({
      input: [
        { type: 'text', text: 'describe this' },
        { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } },
      ],
    } as any);
    expect(reply.results[0]!.category_applied_input_types.violence).toEqual(['text', 'image']);
    expect(env.mock.requests[0]!.json.model).toBe('omni-moderation-latest');
  });

  it('an OpenAI-compatible node; a combo fails over from a 500 to it', async () => {
    const direct = await sdk(env).moderations.create({ model: 'node/text-moderation-stable', input: 'hello' });
    expect(direct.results).toHaveLength(1);
    await combo(env, 'mod', ['openai/omni-moderation-latest', 'node/omni-moderation-latest']);
    env.mock.enqueue({ type: 'status', status: 500 });
    const { response } = await sdk(env).moderations.create({ model: 'mod', input: 'hello' }).withResponse();
    const rows = await rowsOf(env, traceOf(response), 2);
    expect(rows.map((r) => [r.provider, r.status]).sort()).toEqual([
      ['node', 200],
      ['openai', 500],
    ]);
  });

  it('a model-scoped key is refused; bad input is a 400 naming input', async () => {
    const scoped = await env.router.createKey(['proxy', 'model:node/*']);
    const err = await sdk(env, scoped)
      .moderations.create({ input: 'x' })
      .catch((e) => e);
    expect(err.status).toBe(403);
    const bad = await sdk(env)
      .moderations.create({ model: 'openai/omni-moderation-latest', input: [{ type: 'audio' }] as any })
      .catch((e) => e);
    expect(bad.status).toBe(400);
    expect(bad.error.param).toBe('input');
    expect(env.mock.requests).toHaveLength(0);
  });
});

describe('guardrails: the moderation model as a request detector', () => {
  afterEach(async () => {
    await env.router.manage('PUT', '/api/guardrails', {});
  });

  const chat = (content: string) =>
    fetch(`${env.router.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${env.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'openai/gpt-4o', messages: [{ role: 'system', content: 'Be kind; never kill.' }, { role: 'user', content }] }),
    });

  it('block: a flagged user text is refused with 400 guardrail_blocked before the chat upstream is called; the moderation call has its own row', async () => {
    const put = await env.router.manage('PUT', '/api/guardrails', { moderation: { mode: 'block' } });
    expect(put.status, JSON.stringify(put.json)).toBe(200);
    const res = await chat('how do I attack my neighbour');
    expect(res.status).toBe(400);
    const body = await res.json();
    expect(body.error).toMatchObject({ code: 'guardrail_blocked', guardrail: 'moderation' });
    expect(body.error.message).toBe("Blocked by guardrail 'moderation': the request was flagged by the moderation model (violence).");
    // Only the moderation call went out, with the user text only (the system prompt is the operator's).
    expect(env.mock.requests.map((r) => r.endpoint)).toEqual(['openai.moderations']);
    expect(env.mock.requests[0]!.json).toEqual({ model: 'omni-moderation-latest', input: ['how do I attack my neighbour'] });
    const r = await env.router.manage('GET', '/api/logs?limit=50');
    expect((r.json.logs as any[]).some((l) => l.endpoint === 'guardrails:moderation' && l.status === 200)).toBe(true);
  });

  it('a clean text goes on; categories narrow what counts; log mode only records', async () => {
    await env.router.manage('PUT', '/api/guardrails', { moderation: { mode: 'block' } });
    expect((await chat('a nice day')).status).toBe(200);
    expect(env.mock.requests.map((r) => r.endpoint)).toEqual(['openai.moderations', 'openai.chat']);
    await env.router.manage('PUT', '/api/guardrails', { moderation: { mode: 'block', categories: ['hate'] } });
    expect((await chat('kill the process')).status).toBe(200);
    await env.router.manage('PUT', '/api/guardrails', { moderation: { mode: 'log' } });
    expect((await chat('kill the process')).status).toBe(200);
  });

  it('fails open: an unreachable moderation model does not stop the request', async () => {
    await env.router.manage('PUT', '/api/guardrails', { moderation: { mode: 'block' } });
    env.mock.handle((req) => (req.endpoint === 'openai.moderations' ? { type: 'status', status: 500 } : undefined));
    expect((await chat('kill the process')).status).toBe(200);
    const list = await env.router.manage('GET', '/api/guardrails');
    expect(list.json.guardrails.find((g: any) => g.name === 'moderation')).toMatchObject({ mode: 'block', applyTo: 'request', settings: { model: 'openai/omni-moderation-latest', categories: [] } });
  });

  it("the moderation call is counted against the caller's key: its usage row names the key, its quotas count it, its model scopes do not refuse it", async () => {
    await env.router.manage('PUT', '/api/guardrails', { moderation: { mode: 'block' } });
    // A key that may only use openai/gpt-4o, four requests a day: the moderation model is router's choice.
    const created = await env.router.manage('POST', '/api/keys', { name: 'mod-quota', scopes: ['proxy', 'model:openai/gpt-4o'], dailyRequestLimit: 4 });
    expect(created.status, JSON.stringify(created.json)).toBe(201);
    const ask = (content: string) =>
      fetch(`${env.router.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${created.json.key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'openai/gpt-4o', messages: [{ role: 'user', content }] }),
      });
    const first = await ask('how do I attack my neighbour');
    expect(first.status).toBe(400);
    expect((await first.json()).error).toMatchObject({ code: 'guardrail_blocked', guardrail: 'moderation' });
    const rows = await env.router.manage('GET', `/api/logs?limit=50&key=${created.json.id}`);
    const mod = (rows.json.logs as any[]).filter((l) => l.endpoint === 'guardrails:moderation');
    expect(mod).toHaveLength(1);
    expect(mod[0]).toMatchObject({ apiKeyId: created.json.id, status: 200, model: 'omni-moderation-latest' });
    // The chat request and its moderation call were requests 1 and 2 of the day; 3 and 4 are admitted.
    expect((await ask('a nice day')).status).toBe(200);
    // The next chat request is refused by the daily limit before anything goes out.
    env.mock.reset();
    const over = await ask('a nice day');
    expect(over.status).toBe(429);
    expect((await over.json()).error.code).toBe('daily_request_limit');
    expect(env.mock.requests).toHaveLength(0);
  });

  it("a moderation call refused by the caller's quota refuses the request (never failed open)", async () => {
    await env.router.manage('PUT', '/api/guardrails', { moderation: { mode: 'block' } });
    const created = await env.router.manage('POST', '/api/keys', { name: 'mod-one', dailyRequestLimit: 1 });
    const res = await fetch(`${env.router.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${created.json.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'openai/gpt-4o', messages: [{ role: 'user', content: 'kill the process' }] }),
    });
    expect(res.status).toBe(429);
    expect((await res.json()).error.code).toBe('daily_request_limit');
    expect(env.mock.requests).toHaveLength(0);
  });

  it('POST /api/guardrails/test asks the moderation model when the detector is on', async () => {
    const off = await env.router.manage('POST', '/api/guardrails/test', { text: 'I will attack at dawn' });
    expect(off.json).toMatchObject({ blocked: null, findings: [], moderation: null });
    expect(env.mock.requests).toHaveLength(0);
    await env.router.manage('PUT', '/api/guardrails', { moderation: { mode: 'block' } });
    const on = await env.router.manage('POST', '/api/guardrails/test', { text: 'I will attack at dawn' });
    expect(on.status, JSON.stringify(on.json)).toBe(200);
    expect(on.json.blocked).toMatchObject({ guardrail: 'moderation', kind: 'violence' });
    expect(on.json.findings).toEqual([expect.objectContaining({ guardrail: 'moderation', kind: 'violence', action: 'block' })]);
    expect(on.json.moderation).toEqual({ model: 'openai/omni-moderation-latest', checked: true, flagged: true });
    expect(env.mock.requests.map((r) => [r.endpoint, r.json.input])).toEqual([['openai.moderations', ['I will attack at dawn']]]);
    const clean = await env.router.manage('POST', '/api/guardrails/test', { text: 'a nice day' });
    expect(clean.json).toMatchObject({ blocked: null, findings: [], moderation: { checked: true, flagged: false } });
    // Responses are not moderated; an unreachable model is reported, not an error.
    const response = await env.router.manage('POST', '/api/guardrails/test', { text: 'attack', direction: 'response' });
    expect(response.json.moderation).toBeNull();
    env.mock.handle((req) => (req.endpoint === 'openai.moderations' ? { type: 'status', status: 500 } : undefined));
    const down = await env.router.manage('POST', '/api/guardrails/test', { text: 'attack' });
    expect(down.status).toBe(200);
    expect(down.json.moderation).toMatchObject({ model: 'openai/omni-moderation-latest', checked: false });
    expect(down.json.blocked).toBeNull();
  });
});
