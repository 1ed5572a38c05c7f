/**
 * GET /metrics through the real daemon: the tier (management by default, anonymous loopback scrapes only
 * when metricsOpenOnLoopback is on), traffic counted from usage records (a combo whose first target fails:
 * one 5xx and one 2xx attempt, upstream error by kind), Server-Timing figures (router overhead, time to
 * first byte of a stream), tokens, breaker state and cooldowns read at scrape time, process metrics.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chat, combo, content, script, settings, setup, stream, until, type Env } from '../resilience/helpers.js';
import { parseExposition, samples, total, type Sample } from './exposition.js';

let env: Env;

beforeAll(async () => {
  env = await setup({ providers: ['openai', 'groq'] });
  await combo(env, { name: 'fo', strategy: 'priority', models: ['openai/a', 'groq/b'] });
  // One failure opens a circuit, so the breaker gauge has something to show.
  await settings(env, { breakerFailureThreshold: 1 });
});
afterAll(async () => {
  await env?.stop();
});

async function scrape(headers: Record<string, string> = { 'x-router-cli-token': env.router.cliToken }): Promise<{ status: number; type: string | null; text: string }> {
  const res = await fetch(`${env.router.url}/metrics`, { headers });
  return { status: res.status, type: res.headers.get('content-type'), text: await res.text() };
}
async function metrics(): Promise<Sample[]> {
  const r = await scrape();
  expect(r.status, r.text).toBe(200);
  return parseExposition(r.text);
}

describe('GET /metrics', () => {
  it('is a management route by default: an anonymous loopback caller gets 401 with the standard body', async () => {
    const r = await scrape({});
    expect(r.status).toBe(401);
    expect(JSON.parse(r.text).error.type).toBe('authentication_error');
    const ok = await scrape();
    expect(ok.status).toBe(200);
    expect(ok.type).toBe('text/plain; version=0.0.4; charset=utf-8');
  });

  it('counts a failed-over combo request per attempt, with the upstream error by kind and Server-Timing figures', async () => {
    script(env.mock, { a: { type: 'status', status: 503, message: 'overloaded' } });
    const r = await chat(env, 'fo');
    expect(r.status, r.text).toBe(200);
    expect(content(r)).toBe('served by b');
    const s = await stream(env, 'groq/b');
    expect(s.status).toBe(200);
    const m = await until(async () => {
      const all = await metrics();
      return total(all, 'router_requests_total') >= 3 ? all : undefined;
    });
    const base = { route: '/v1/chat/completions', client_format: 'openai-chat' };
    expect(total(m, 'router_requests_total', { ...base, provider: 'openai', model: 'a', combo: 'fo', status_class: '5xx' })).toBe(1);
    expect(total(m, 'router_requests_total', { ...base, provider: 'groq', model: 'b', combo: 'fo', status_class: '2xx' })).toBe(1);
    expect(total(m, 'router_requests_total', { ...base, provider: 'groq', model: 'b', combo: '', status_class: '2xx' })).toBe(1);
    expect(total(m, 'router_upstream_errors_total', { provider: 'openai', kind: 'server', status_class: '5xx' })).toBe(1);
    // Histograms: cumulative buckets ending in +Inf, _count equal to the requests counted.
    const buckets = samples(m, 'router_request_duration_seconds_bucket', { provider: 'groq', model: 'b', status_class: '2xx' });
    expect(buckets.at(-1)!.labels.le).toBe('+Inf');
    expect(total(m, 'router_request_duration_seconds_count', { provider: 'groq', model: 'b' })).toBe(2);
    const serverTiming = r.headers.get('server-timing')!;
    const routerMs = Number(/router;dur=([\d.]+)/.exec(serverTiming)![1]);
    const overheadSum = total(m, 'router_overhead_seconds_sum', { provider: 'groq', mode: 'json' });
    expect(total(m, 'router_overhead_seconds_count', { provider: 'groq', mode: 'json' })).toBe(1);
    expect(Math.abs(overheadSum * 1000 - routerMs)).toBeLessThan(0.01);
    expect(total(m, 'router_overhead_seconds_count', { provider: 'groq', mode: 'stream' })).toBe(1);
    expect(total(m, 'router_time_to_first_byte_seconds_count', { provider: 'groq' })).toBe(1);
    expect(total(m, 'router_tokens_total', { provider: 'groq', model: 'b', kind: 'input' })).toBeGreaterThan(0);
    expect(total(m, 'router_tokens_total', { provider: 'groq', model: 'b', kind: 'output' })).toBeGreaterThan(0);
    // The 503 opened the model's circuit (threshold 1): read from the breakers at scrape time.
    expect(total(m, 'router_breaker_state', { provider: 'openai', model: 'a', state: 'open' })).toBe(1);
    expect(total(m, 'router_breaker_state', { provider: 'openai', model: 'a', state: 'closed' })).toBe(0);
    expect(total(m, 'router_inflight_requests')).toBe(0);
    expect(total(m, 'router_open_streams')).toBe(0);
    expect(samples(m, 'router_usage_queue_depth')).toHaveLength(1);
    expect(samples(m, 'router_usage_dropped_total')).toHaveLength(1);
    expect(samples(m, 'router_info')[0]!.labels.version).toMatch(/^\d+\.\d+\.\d+/);
  });

  it('shows cooldowns per provider and model, and process metrics', async () => {
    script(env.mock, { c: { type: 'status', status: 429, headers: { 'retry-after': '120' } } });
    const r = await chat(env, 'groq/c');
    expect(r.status).toBe(429);
    const m = await metrics();
    expect(total(m, 'router_cooldowns', { provider: 'groq', model: 'c' })).toBe(1);
    expect(total(m, 'router_cooldown_remaining_seconds', { provider: 'groq', model: 'c' })).toBeGreaterThan(100);
    expect(total(m, 'router_upstream_errors_total', { provider: 'groq', kind: 'rate_limit', status_class: '4xx' })).toBe(1);
    for (const name of ['process_resident_memory_bytes', 'nodejs_heap_size_used_bytes', 'nodejs_eventloop_lag_p99_seconds', 'process_open_fds']) {
      expect(samples(m, name), name).toHaveLength(1);
    }
  });

  it('requests refused for made-up model names do not use up the model label cap (issue 27 item 7)', async () => {
    // More refused names than the cap (MAX_MODEL_LABELS, 100) before any of these real models is served.
    for (let i = 0; i < 105; i++) expect((await chat(env, `made-up-${i}`)).status).toBe(404);
    const real = await chat(env, 'openai/served-after-junk');
    expect(real.status, real.text).toBe(200);
    const m = await until(async () => {
      const all = await metrics();
      return total(all, 'router_requests_total', { model: 'served-after-junk' }) >= 1 ? all : undefined;
    });
    expect(total(m, 'router_requests_total', { provider: 'openai', model: 'served-after-junk', status_class: '2xx' })).toBe(1);
    // The refusals are still counted, under "other".
    expect(total(m, 'router_requests_total', { model: 'other', status_class: '4xx' })).toBe(105);
    expect(samples(m, 'router_requests_total').some((s) => s.labels.model?.startsWith('made-up-'))).toBe(false);
  });

  it('metricsOpenOnLoopback lets an anonymous loopback scraper in', async () => {
    await settings(env, { metricsOpenOnLoopback: true });
    try {
      const r = await scrape({});
      expect(r.status).toBe(200);
      expect(r.text).toContain('# TYPE router_requests_total counter');
    } finally {
      await settings(env, { metricsOpenOnLoopback: false });
    }
    expect((await scrape({})).status).toBe(401);
  });
});
