/**
 * Served-model check (issue 30 item 6): when the upstream's reply names another model than the one asked
 * for, the request log keeps both (`model`, `servedModel`); a dated snapshot of the same model is the same
 * model (no event); another model fires `model.mismatch` on webhooks and the live feed. Real daemon, mock
 * upstream that answers as a given model.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'undici';
import { modelBase, sameModel } from '../../src/daemon/routing/served-model.js';
import { chat, script, settings, startReceiver, stream, until, type Env, type Receiver, setup } from '../resilience/helpers.js';

describe('sameModel', () => {
  it('a dated snapshot, a version suffix or a provider path is the same model', () => {
    expect(sameModel('gpt-4o', 'gpt-4o-2024-08-06')).toBe(true);
    expect(sameModel('claude-sonnet-4-5', 'claude-sonnet-4-5-20250929')).toBe(true);
    expect(sameModel('gpt-4', 'gpt-4-0613')).toBe(true);
    expect(sameModel('gemini-2.0-flash', 'models/gemini-2.0-flash-001')).toBe(true);
    expect(sameModel('claude-3-5-sonnet-latest', 'claude-3-5-sonnet-20241022')).toBe(true);
    expect(sameModel('gpt-4o', '')).toBe(true);
    expect(modelBase('openai/GPT-4o-mini-2024-07-18')).toBe('gpt-4o-mini');
  });
  it('another model is not', () => {
    expect(sameModel('gpt-4o', 'gpt-4o-mini')).toBe(false);
    expect(sameModel('gpt-4o', 'gpt-4o-mini-2024-07-18')).toBe(false);
    expect(sameModel('claude-opus-4-1', 'claude-sonnet-4-5-20250929')).toBe(false);
  });
});

describe('served model, end to end', () => {
  let env: Env;
  let rx: Receiver;
  beforeAll(async () => {
    env = await setup({ providers: ['openai'] });
    rx = await startReceiver();
    await settings(env, { allowPrivateWebhookDestinations: true });
    const w = await env.router.manage('POST', '/api/webhooks', { url: rx.url, events: ['model.mismatch'] });
    expect(w.status, JSON.stringify(w.json)).toBe(201);
    script(env.mock, {
      'gpt-4o': { type: 'text', text: 'snapshot', model: 'gpt-4o-2024-08-06' },
      swapped: { type: 'text', text: 'cheaper', model: 'gpt-4o-mini-2024-07-18' },
    });
  });
  afterAll(async () => {
    await rx?.close();
    await env?.stop();
  });

  const logOf = async (traceId: string | null) =>
    until(async () => ((await env.router.manage('GET', '/api/logs?limit=50')).json.logs as any[]).find((l) => l.traceId === traceId));

  it('a dated snapshot is logged as served, with no event', async () => {
    const r = await chat(env, 'openai/gpt-4o');
    expect(r.status, r.text).toBe(200);
    const row = await logOf(r.headers.get('x-router-trace-id'));
    expect(row).toMatchObject({ model: 'gpt-4o', servedModel: 'gpt-4o-2024-08-06' });
  });

  it('another model fires model.mismatch (webhook and live feed), the row keeps both names', async () => {
    const ws = new WebSocket(`${env.router.url.replace('http', 'ws')}/api/live`, { headers: { 'x-router-cli-token': env.router.cliToken } } as never);
    const frames: any[] = [];
    ws.addEventListener('message', (ev) => frames.push(JSON.parse(String(ev.data))));
    await new Promise<void>((resolve, reject) => {
      ws.addEventListener('open', () => resolve());
      ws.addEventListener('error', () => reject(new Error('ws error')));
    });
    try {
      const r = await stream(env, 'openai/swapped');
      expect(r.status).toBe(200);
      const trace = r.headers.get('x-router-trace-id');
      const row = await logOf(trace);
      expect(row).toMatchObject({ model: 'swapped', servedModel: 'gpt-4o-mini-2024-07-18', requestedModel: 'openai/swapped' });
      const hook = await until(() => rx.events.find((e) => e.event === 'model.mismatch'));
      expect(hook.data).toMatchObject({ trace_id: trace, provider: 'openai', model: 'swapped', served_model: 'gpt-4o-mini-2024-07-18', requested_model: 'openai/swapped' });
      const live = await until(() => frames.find((f) => f.type === 'event' && f.event === 'model.mismatch'));
      expect(live.data).toMatchObject({ trace_id: trace, served_model: 'gpt-4o-mini-2024-07-18' });
      // The snapshot request before did not fire one.
      expect(rx.events.filter((e) => e.event === 'model.mismatch')).toHaveLength(1);
    } finally {
      ws.close();
    }
  });
});
