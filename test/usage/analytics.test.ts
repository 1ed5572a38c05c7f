/**
 * Analytics routes against a known set of rows: summary, breakdown, timeseries and telemetry numbers equal
 * what the rows say; the request log pages newest first without gaps and filters; every query is
 * validated (400); the price table can be overridden and restored.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bootServices, buildApp, closeServices } from '../../src/daemon/boot.js';
import { Logger } from '../../src/daemon/logger.js';
import type { Services } from '../../src/daemon/services.js';
import { percentiles } from '../../src/daemon/usage/queries.js';

/** Ids of keys that no longer exist (UUID-shaped, as stored ids are): a key filter keeps such an id (keys/lookup.ts). */
const KEY = ['00000000-0000-4000-8000-000000000000', '00000000-0000-4000-8000-000000000001'];

let home: string;
let services: Services;
let app: ReturnType<typeof buildApp>;

interface Fixture {
  ts: number;
  trace: string;
  key: string | null;
  endpoint: string;
  provider: string;
  model: string;
  requested: string;
  connection: string | null;
  combo: string | null;
  status: number;
  latency: number;
  upstream: number;
  tin: number;
  tout: number;
  cr: number;
  cw: number;
  rs: number;
  cost: number;
  streamed: number;
}

const HOUR = 3_600_000;
const BASE = Date.UTC(2026, 10, 1, 0, 0, 0); // 2026-11-01T00:00:00Z
const PROVIDERS = ['openai', 'anthropic', 'gemini'];
const MODELS: Record<string, string[]> = { openai: ['gpt-4o', 'gpt-4o-mini'], anthropic: ['claude-haiku-4-5'], gemini: ['gemini-2.5-flash'] };
const ROWS: Fixture[] = [];

beforeAll(async () => {
  home = mkdtempSync(join(tmpdir(), 'router-usage-an-'));
  services = await bootServices({ home, host: '127.0.0.1', port: 0, log: new Logger() });
  app = buildApp(services);
  await services.settings.update({ usageRetentionDays: 3650 });
  // 60 rows over 5 hours, deterministic.
  for (let i = 0; i < 60; i++) {
    const provider = PROVIDERS[i % 3]!;
    const models = MODELS[provider]!;
    const model = models[i % models.length]!;
    ROWS.push({
      ts: BASE + Math.floor(i / 12) * HOUR + (i % 12) * 60_000,
      trace: `t-${Math.floor(i / 2)}`, // pairs of attempts share a trace
      key: i % 4 === 0 ? null : KEY[i % 2]!,
      endpoint: i % 5 === 0 ? '/v1/messages' : '/v1/chat/completions',
      provider,
      model,
      requested: i % 6 === 0 ? 'my-combo' : `${provider}/${model}`,
      connection: i % 3 === 2 ? null : `conn-${i % 3}`,
      combo: i % 6 === 0 ? 'my-combo' : null,
      status: i % 7 === 0 ? 502 : i % 11 === 0 ? 429 : 200,
      latency: 10 + i * 3,
      upstream: 5 + i,
      tin: 100 + i,
      tout: 10 + i,
      cr: i % 2 ? 20 : 0,
      cw: i % 5 ? 0 : 7,
      rs: i % 3 ? 0 : 4,
      cost: (i + 1) / 1e5,
      streamed: i % 2,
    });
  }
  const insert = services.db.prepare(
    `INSERT INTO usage_log (ts, trace_id, api_key_id, endpoint, client_format, provider, model, requested_model, connection_id, combo, status,
       latency_ms, upstream_ms, tokens_in, tokens_out, cache_read_tokens, cache_write_tokens, reasoning_tokens, cost_usd, streamed, estimated)
     VALUES (?, ?, ?, ?, 'openai-chat', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 0)`,
  );
  services.db.transaction(() => {
    for (const r of ROWS) {
      insert.run(r.ts, r.trace, r.key, r.endpoint, r.provider, r.model, r.requested, r.connection, r.combo, r.status, r.latency, r.upstream, r.tin, r.tout, r.cr, r.cw, r.rs, r.cost, r.streamed);
    }
  })();
});
afterAll(() => {
  if (services) closeServices(services);
  rmSync(home, { recursive: true, force: true });
});

async function get(path: string): Promise<{ status: number; json: any }> {
  const res = await app.request(`http://router.test${path}`, { headers: { 'x-router-cli-token': services.cliToken } }, { remoteAddress: '127.0.0.1' });
  return { status: res.status, json: await res.json() };
}

function totals(rows: Fixture[]) {
  const sum = (f: (r: Fixture) => number) => rows.reduce((n, r) => n + f(r), 0);
  return {
    requests: rows.length,
    errors: rows.filter((r) => r.status >= 400).length,
    tokens: { input: sum((r) => r.tin), output: sum((r) => r.tout), cacheRead: sum((r) => r.cr), cacheWrite: sum((r) => r.cw), reasoning: sum((r) => r.rs), total: sum((r) => r.tin + r.tout) },
  };
}
const costOf = (rows: Fixture[]) => rows.reduce((n, r) => n + r.cost, 0);
const iso = (ms: number) => new Date(ms).toISOString();

describe('GET /api/usage/summary', () => {
  it('totals every row when no range is given', async () => {
    const r = await get('/api/usage/summary');
    expect(r.status).toBe(200);
    expect(r.json).toMatchObject({ ...totals(ROWS), traces: 30, streamed: 30, estimated: 0 });
    expect(r.json.costUsd).toBeCloseTo(costOf(ROWS), 10);
    expect(r.json.avgLatencyMs).toBeCloseTo(ROWS.reduce((n, r) => n + r.latency, 0) / ROWS.length, 2);
  });

  it('honours from (inclusive) and to (exclusive), as ISO or unix ms', async () => {
    const from = BASE + HOUR;
    const to = BASE + 3 * HOUR;
    const inRange = ROWS.filter((r) => r.ts >= from && r.ts < to);
    for (const q of [`from=${iso(from)}&to=${iso(to)}`, `from=${from}&to=${to}`]) {
      const r = await get(`/api/usage/summary?${q}`);
      expect(r.json).toMatchObject({ ...totals(inRange), from: iso(from), to: iso(to) });
      expect(r.json.costUsd).toBeCloseTo(costOf(inRange), 10);
    }
  });
});

describe('GET /api/usage/breakdown', () => {
  const groupings: Array<[string, (r: Fixture) => string | null]> = [
    ['provider', (r) => r.provider],
    ['model', (r) => `${r.provider}/${r.model}`],
    ['key', (r) => r.key],
    ['connection', (r) => r.connection],
    ['endpoint', (r) => r.endpoint],
    ['combo', (r) => r.combo],
  ];
  it.each(groupings)('by=%s matches the rows of each group', async (by, keyOf) => {
    const r = await get(`/api/usage/breakdown?by=${by}`);
    expect(r.status).toBe(200);
    expect(r.json.by).toBe(by);
    const groups = new Map<string | null, Fixture[]>();
    for (const row of ROWS) groups.set(keyOf(row), [...(groups.get(keyOf(row)) ?? []), row]);
    expect(r.json.rows).toHaveLength(groups.size);
    for (const g of r.json.rows) {
      const rows = groups.get(g.key)!;
      expect(g, String(g.key)).toMatchObject({ key: g.key, ...totals(rows) });
      expect(g.costUsd).toBeCloseTo(costOf(rows), 10);
    }
    // Most expensive first.
    const costs = r.json.rows.map((g: { costUsd: number }) => g.costUsd);
    expect(costs).toEqual([...costs].sort((a, b) => b - a));
  });
});

describe('GET /api/usage/timeseries', () => {
  it('buckets by hour, zero-filled, and filters by provider and model', async () => {
    const from = BASE - HOUR;
    const to = BASE + 6 * HOUR;
    const r = await get(`/api/usage/timeseries?bucket=hour&from=${from}&to=${to}&provider=openai&model=gpt-4o`);
    expect(r.status).toBe(200);
    expect(r.json.points).toHaveLength(7);
    const rows = ROWS.filter((x) => x.provider === 'openai' && x.model === 'gpt-4o');
    r.json.points.forEach((p: any, i: number) => {
      const start = from + i * HOUR;
      const inBucket = rows.filter((x) => x.ts >= start && x.ts < start + HOUR);
      expect(p).toMatchObject({ t: iso(start), requests: inBucket.length, errors: inBucket.filter((x) => x.status >= 400).length, tokensIn: inBucket.reduce((n, x) => n + x.tin, 0) });
      expect(p.costUsd).toBeCloseTo(costOf(inBucket), 10);
    });
    expect(r.json.points[0].requests).toBe(0);
    // The model may also be named <provider>/<model>.
    const same = await get(`/api/usage/timeseries?bucket=hour&from=${from}&to=${to}&model=openai/gpt-4o`);
    expect(same.json.points).toEqual(r.json.points);
  });

  it('buckets by minute and day', async () => {
    const day = await get(`/api/usage/timeseries?bucket=day&from=${BASE}&to=${BASE + 86_400_000}`);
    expect(day.json.points).toEqual([expect.objectContaining({ t: iso(BASE), requests: 60 })]);
    const minute = await get(`/api/usage/timeseries?bucket=minute&from=${BASE}&to=${BASE + 12 * 60_000}`);
    expect(minute.json.points).toHaveLength(12);
    expect(minute.json.points.every((p: { requests: number }) => p.requests === 1)).toBe(true);
  });

  it('refuses a range with too many buckets', async () => {
    const r = await get(`/api/usage/timeseries?bucket=minute&from=${BASE}&to=${BASE + 30 * 86_400_000}`);
    expect(r.status).toBe(400);
  });

  /** The fixture's hourly points (requests, errors, tokens in, cost) of some rows, over [from, to). */
  const hourly = (rows: Fixture[], from: number, to: number) => {
    const out = [];
    for (let start = from; start < to; start += HOUR) {
      const b = rows.filter((x) => x.ts >= start && x.ts < start + HOUR);
      out.push({ t: iso(start), requests: b.length, errors: b.filter((x) => x.status >= 400).length, tokensIn: b.reduce((n, x) => n + x.tin, 0), cost: costOf(b) });
    }
    return out;
  };
  const expectPoints = (points: any[], want: ReturnType<typeof hourly>) => {
    expect(points).toHaveLength(want.length);
    points.forEach((p, i) => {
      const { cost, ...rest } = want[i]!;
      expect(p).toMatchObject(rest);
      expect(p.costUsd).toBeCloseTo(cost, 10);
    });
  };

  it('filters by API key and by combo', async () => {
    const from = BASE;
    const to = BASE + 5 * HOUR;
    const byKey = await get(`/api/usage/timeseries?bucket=hour&from=${from}&to=${to}&key=${KEY[1]}`);
    expect(byKey.status).toBe(200);
    expectPoints(byKey.json.points, hourly(ROWS.filter((x) => x.key === KEY[1]), from, to));
    const byCombo = await get(`/api/usage/timeseries?bucket=hour&from=${from}&to=${to}&combo=my-combo`);
    expectPoints(byCombo.json.points, hourly(ROWS.filter((x) => x.combo === 'my-combo'), from, to));
    // Filters combine.
    const both = await get(`/api/usage/timeseries?bucket=hour&from=${from}&to=${to}&combo=my-combo&key=${KEY[0]}&provider=openai`);
    expectPoints(both.json.points, hourly(ROWS.filter((x) => x.combo === 'my-combo' && x.key === KEY[0] && x.provider === 'openai'), from, to));
    const none = await get(`/api/usage/timeseries?bucket=hour&from=${from}&to=${to}&combo=no-such-combo`);
    expect(none.json.points.every((p: { requests: number }) => p.requests === 0)).toBe(true);
  });

  it.each([
    ['key', (r: Fixture) => r.key],
    ['combo', (r: Fixture) => r.combo],
    ['provider', (r: Fixture) => r.provider],
    ['model', (r: Fixture) => `${r.provider}/${r.model}`],
  ] as const)('groupBy=%s: one series per group, most expensive first, each equal to its rows', async (by, keyOf) => {
    const from = BASE;
    const to = BASE + 5 * HOUR;
    const r = await get(`/api/usage/timeseries?bucket=hour&from=${from}&to=${to}&groupBy=${by}`);
    expect(r.status).toBe(200);
    expect(r.json.groupBy).toBe(by);
    expectPoints(r.json.points, hourly(ROWS, from, to));
    const groups = new Map<string | null, Fixture[]>();
    for (const row of ROWS) groups.set(keyOf(row), [...(groups.get(keyOf(row)) ?? []), row]);
    const order = [...groups].sort(([, a], [, b]) => costOf(b) - costOf(a)).map(([k]) => k);
    expect(r.json.series.map((s: { key: string | null }) => s.key)).toEqual(order);
    expect(r.json.otherGroups).toBe(0);
    for (const s of r.json.series) expectPoints(s.points, hourly(groups.get(s.key)!, from, to));
  });

  it('groupBy with a filter and top: the largest groups of the filtered rows, the rest counted in otherGroups', async () => {
    const from = BASE;
    const to = BASE + 5 * HOUR;
    const r = await get(`/api/usage/timeseries?bucket=hour&from=${from}&to=${to}&groupBy=model&provider=openai&top=1`);
    expect(r.status).toBe(200);
    const openai = ROWS.filter((x) => x.provider === 'openai');
    const [first, second] = ['gpt-4o', 'gpt-4o-mini'].map((m) => openai.filter((x) => x.model === m));
    const biggest = costOf(first!) >= costOf(second!) ? 'gpt-4o' : 'gpt-4o-mini';
    expect(r.json.series).toHaveLength(1);
    expect(r.json.series[0].key).toBe(`openai/${biggest}`);
    expect(r.json.series[0].providerId).toBe('openai');
    expect(r.json.otherGroups).toBe(1);
    expectPoints(r.json.series[0].points, hourly(openai.filter((x) => x.model === biggest), from, to));
  });

  it('names key groups by the key\'s name (in breakdown rows too)', async () => {
    const created = await services.keys.create('named-key');
    const ts = BASE + 4 * HOUR + 59 * 60_000;
    services.db
      .prepare(
        `INSERT INTO usage_log (ts, trace_id, api_key_id, endpoint, client_format, provider, model, requested_model, status, latency_ms, tokens_in, tokens_out, cost_usd, streamed, estimated)
         VALUES (?, 'named', ?, '/v1/chat/completions', 'openai-chat', 'openai', 'gpt-4o', 'openai/gpt-4o', 200, 5, 1, 1, 1, 0, 0)`,
      )
      .run(ts, created.id);
    try {
      const r = await get(`/api/usage/timeseries?bucket=hour&from=${BASE}&to=${BASE + 5 * HOUR}&groupBy=key`);
      expect(r.json.series[0]).toMatchObject({ key: created.id, name: 'named-key' });
      expect(r.json.series[0].points[4].requests).toBe(1);
      const b = await get(`/api/usage/breakdown?by=key&from=${BASE}&to=${BASE + 5 * HOUR}`);
      expect(b.json.rows[0]).toMatchObject({ key: created.id, name: 'named-key', requests: 1 });
    } finally {
      services.db.prepare("DELETE FROM usage_log WHERE trace_id = 'named'").run();
      await services.keys.remove(created.id);
    }
  });
});

describe('GET /api/logs', () => {
  /** Fixture rows with their ids (inserted in order), newest first; built after beforeAll filled ROWS. */
  const newest = () => [...ROWS].map((r, i) => ({ ...r, id: i + 1 })).reverse();

  it('pages newest first with a cursor, without gaps or repeats', async () => {
    const seen: number[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const r: { status: number; json: any } = await get(`/api/logs?limit=7${cursor ? `&cursor=${cursor}` : ''}`);
      expect(r.status).toBe(200);
      expect(r.json.logs.length).toBeLessThanOrEqual(7);
      seen.push(...r.json.logs.map((l: { id: number }) => l.id));
      cursor = r.json.nextCursor;
      pages++;
    } while (cursor);
    expect(pages).toBe(Math.ceil(60 / 7));
    expect(seen).toEqual(newest().map((r) => r.id));
  });

  it('defaults to 50 entries and returns the documented fields', async () => {
    const r = await get('/api/logs');
    expect(r.json.logs).toHaveLength(50);
    expect(r.json.nextCursor).toBe(String(r.json.logs[49].id));
    const top = newest()[0]!;
    expect(r.json.logs[0]).toEqual({
      id: top.id,
      timestamp: iso(top.ts),
      traceId: top.trace,
      apiKeyId: top.key,
      apiKeyName: null,
      endpoint: top.endpoint,
      clientFormat: 'openai-chat',
      provider: top.provider,
      providerId: top.provider,
      model: top.model,
      servedModel: null,
      requestedModel: top.requested,
      connectionId: top.connection,
      connectionName: null,
      combo: top.combo,
      status: top.status,
      latencyMs: top.latency,
      upstreamMs: top.upstream,
      tokensIn: top.tin,
      tokensOut: top.tout,
      cacheReadTokens: top.cr,
      cacheWriteTokens: top.cw,
      reasoningTokens: top.rs,
      // parts of the totals (migration 0026): 0 on rows that did not set them
      cacheWrite1hTokens: 0,
      audioInputTokens: 0,
      audioOutputTokens: 0,
      imageInputTokens: 0,
      imageOutputTokens: 0,
      costUsd: top.cost,
      // rows written straight to the table here carry no cost source (as rows recorded before migration 0021)
      costSource: null,
      priceVersion: null,
      streamed: top.streamed === 1,
      estimated: false,
      finishReason: null,
      error: null,
      userAgent: null,
      forwardedFor: null,
      notes: null,
      sessionId: null,
    });
  });

  const filters: Array<[string, (r: Fixture) => boolean]> = [
    ['provider=anthropic', (r) => r.provider === 'anthropic'],
    ['model=gpt-4o-mini', (r) => r.model === 'gpt-4o-mini'],
    ['model=openai/gpt-4o', (r) => r.provider === 'openai' && r.model === 'gpt-4o'],
    ['model=my-combo', (r) => r.requested === 'my-combo'],
    ['status=429', (r) => r.status === 429],
    ['status=5xx', (r) => r.status >= 500],
    ['status=error', (r) => r.status >= 400],
    ['status=success', (r) => r.status < 400],
    [`key=${KEY[1]}`, (r) => r.key === KEY[1]],
    [`from=${BASE + 2 * HOUR}&to=${BASE + 3 * HOUR}`, (r) => r.ts >= BASE + 2 * HOUR && r.ts < BASE + 3 * HOUR],
    [`provider=openai&status=success&key=${KEY[1]}`, (r) => r.provider === 'openai' && r.status < 400 && r.key === KEY[1]],
  ];
  it.each(filters)('filters %s', async (q, pred) => {
    const r = await get(`/api/logs?${q}&limit=500`);
    expect(r.status).toBe(200);
    expect(r.json.logs.map((l: { id: number }) => l.id)).toEqual(newest().filter(pred).map((x) => x.id));
    expect(r.json.nextCursor).toBeNull();
  });
});

describe('GET /api/telemetry/summary', () => {
  it('reports nearest-rank latency percentiles per provider from recent rows', async () => {
    // Recent rows: the fixture rows are old; add fresh ones through the recorder's table.
    const now = Date.now();
    const insert = services.db.prepare(
      "INSERT INTO usage_log (ts, trace_id, endpoint, provider, model, status, latency_ms, upstream_ms, streamed) VALUES (?, 'tt', '/v1/chat/completions', 'xai', 'grok-4', ?, ?, ?, 0)",
    );
    const latencies = Array.from({ length: 40 }, (_, i) => 100 + ((i * 37) % 40) * 5);
    latencies.forEach((ms, i) => insert.run(now - 1000, i < 4 ? 503 : 200, ms, ms - 10));
    const r = await get('/api/telemetry/summary?minutes=5');
    expect(r.status).toBe(200);
    const xai = r.json.providers.find((p: { provider: string }) => p.provider === 'xai');
    const ok = latencies.slice(4);
    expect(xai).toMatchObject({ requests: 40, errors: 4, errorRate: 0.1, latencyMs: percentiles(ok), upstreamMs: percentiles(ok.map((x) => x - 10)) });
    expect(xai.overheadMs).toEqual({ p50: 10, p95: 10, p99: 10 });
    expect(percentiles([1, 2, 3, 4, 5, 6, 7, 8, 9, 10])).toEqual({ p50: 5, p95: 10, p99: 10 });
    // The old fixture rows are outside the window.
    expect(r.json.providers.map((p: { provider: string }) => p.provider)).toEqual(['xai']);
    services.db.prepare("DELETE FROM usage_log WHERE trace_id = 'tt'").run();
  });
});

describe('query validation', () => {
  it.each([
    '/api/usage/summary?from=yesterday',
    '/api/usage/summary?from=2026-11-02&to=2026-11-01',
    '/api/usage/summary?unknown=1',
    '/api/usage/breakdown',
    '/api/usage/breakdown?by=color',
    '/api/usage/timeseries?bucket=week',
    '/api/usage/timeseries?groupBy=connection',
    '/api/usage/timeseries?groupBy=key&top=0',
    '/api/usage/timeseries?groupBy=key&top=21',
    '/api/usage/timeseries?top=3',
    '/api/usage/timeseries?key=',
    '/api/usage/timeseries?combo=',
    '/api/logs?limit=0',
    '/api/logs?limit=501',
    '/api/logs?limit=ten',
    '/api/logs?status=abc',
    '/api/logs?status=99',
    '/api/logs?cursor=-4',
    '/api/logs?cursor=abc',
    '/api/logs?from=1e99',
    '/api/telemetry/summary?minutes=0',
    '/api/pricing?vendor=openai',
  ])('%s -> 400 with the standard error body', async (path) => {
    const r = await get(path);
    expect(r.status).toBe(400);
    expect(r.json.error).toMatchObject({ type: 'invalid_request_error', code: 'bad_request' });
  });

  it('the analytics routes need management authentication', async () => {
    const res = await app.request('http://router.test/api/usage/summary', {}, { remoteAddress: '203.0.113.9' });
    expect(res.status).toBe(401);
  });
});

describe('pricing routes', () => {
  const cli = { 'x-router-cli-token': '' };
  const send = async (method: string, path: string, body?: unknown) => {
    cli['x-router-cli-token'] = services.cliToken;
    const res = await app.request(
      `http://router.test${path}`,
      { method, headers: { ...cli, ...(body ? { 'content-type': 'application/json' } : {}) }, body: body ? JSON.stringify(body) : undefined },
      { remoteAddress: '127.0.0.1' },
    );
    return { status: res.status, json: await res.json() };
  };

  it('lists shipped defaults for the main providers', async () => {
    const r = await send('GET', '/api/pricing');
    const providers = new Set(r.json.pricing.map((p: { provider: string }) => p.provider));
    for (const p of ['openai', 'anthropic', 'gemini', 'deepseek', 'groq', 'mistral', 'xai']) expect(providers.has(p), p).toBe(true);
    const one = await send('GET', '/api/pricing?provider=anthropic');
    expect(one.json.pricing.every((p: { provider: string }) => p.provider === 'anthropic')).toBe(true);
  });

  it('overrides a model with slashes in its id, applies it to new rows, and DELETE restores the default', async () => {
    const before = await send('GET', '/api/pricing/groq/openai/gpt-oss-120b');
    expect(before.json).toMatchObject({ provider: 'groq', model: 'openai/gpt-oss-120b', source: 'default', hasDefault: true });
    const put = await send('PUT', '/api/pricing/groq/openai/gpt-oss-120b', { input: 1, output: 2, cacheRead: 0.5 });
    expect(put.status).toBe(200);
    expect(put.json).toEqual({ provider: 'groq', model: 'openai/gpt-oss-120b', input: 1, output: 2, cacheRead: 0.5, cacheWrite: null, reasoning: null, source: 'override', hasDefault: true });
    expect(services.usage.pricing.cost('groq', 'openai/gpt-oss-120b', { inputTokens: 1_000_000, outputTokens: 1_000_000 })).toEqual({ costUsd: 3, costSource: 'computed', priceVersion: 'override' });
    const del = await send('DELETE', '/api/pricing/groq/openai/gpt-oss-120b');
    expect(del.json).toMatchObject({ deleted: true, pricing: { source: 'default', input: before.json.input } });
    expect((await send('DELETE', '/api/pricing/groq/openai/gpt-oss-120b')).status).toBe(404);
  });

  it('adds a price for an unknown model and removes it again', async () => {
    expect((await send('GET', '/api/pricing/mynode/custom-model')).status).toBe(404);
    expect((await send('PUT', '/api/pricing/mynode/custom-model', { input: 0.2, output: 0.4 })).json).toMatchObject({ source: 'override', hasDefault: false });
    const del = await send('DELETE', '/api/pricing/mynode/custom-model');
    expect(del.json).toEqual({ deleted: true, pricing: null });
  });

  it.each([
    [{ input: -1, output: 1 }],
    [{ input: 1 }],
    [{ input: 1, output: 1, surprise: true }],
    [{ input: '1', output: 1 }],
  ])('rejects the body %j', async (body) => {
    expect((await send('PUT', '/api/pricing/openai/gpt-4o', body)).status).toBe(400);
  });

  it('rejects a bad provider id', async () => {
    expect((await send('PUT', '/api/pricing/bad%20id/x', { input: 1, output: 1 })).status).toBe(400);
  });

  it('usageRetentionDays is a validated setting', async () => {
    expect((await send('PATCH', '/api/settings', { usageRetentionDays: 0 })).status).toBe(400);
    const ok = await send('PATCH', '/api/settings', { usageRetentionDays: 3650 });
    expect(ok.status).toBe(200);
  });
});
