/**
 * The usage storage port (usage/port.ts) on both adapters: the migrated SQLite file and a real PostgreSQL 15.
 * Every read the analytics, request log, telemetry, sessions and diversity routes make runs on both over the
 * same rows, and the answers must be identical (the last suite compares them).
 */
import { describe, expect, it } from 'vitest';
import type { StoredUsage, UsageRepository } from '../../src/daemon/usage/port.js';
import type { UsageRecord } from '../../src/daemon/usage/record.js';
import { SqlUsageRepository } from '../../src/daemon/usage/sql-repository.js';
import { adapterTitle, storageAdapters } from '../support/storage.js';

const T0 = Date.UTC(2026, 0, 10, 12, 0, 0);
const MIN = 60_000;

function rec(i: number, over: Partial<UsageRecord> = {}): UsageRecord {
  const providers = ['openai', 'anthropic', 'xai'];
  const provider = providers[i % 3]!;
  return {
    ts: T0 + i * 7 * MIN + (i % 5) * 1000,
    traceId: `trace-${Math.floor(i / 2)}`,
    apiKeyId: i % 4 === 0 ? null : `key-${i % 3}`,
    endpoint: i % 2 ? '/v1/messages' : '/v1/chat/completions',
    clientFormat: i % 2 ? 'anthropic' : 'openai-chat',
    provider,
    model: `${provider}-m${i % 2}`,
    requestedModel: i % 6 === 0 ? 'my-combo' : `${provider}/${provider}-m${i % 2}`,
    connectionId: i % 5 === 0 ? null : `conn-${i % 4}`,
    combo: i % 6 === 0 ? 'my-combo' : null,
    status: i % 7 === 3 ? 429 : i % 11 === 5 ? 500 : 200,
    latencyMs: 100 + ((i * 37) % 900) + 0.25,
    upstreamMs: i % 8 === 1 ? null : 80 + ((i * 29) % 700) + 0.5,
    tokensIn: 1000 + i * 13,
    tokensOut: 200 + i * 7,
    cacheReadTokens: i % 3 === 0 ? 400 : 0,
    cacheWriteTokens: i % 4 === 1 ? 50 : 0,
    reasoningTokens: i % 5 === 2 ? 30 : 0,
    cacheWrite1hTokens: i % 4 === 1 ? 20 : 0,
    audioInputTokens: i === 7 ? 11 : 0,
    audioOutputTokens: i === 7 ? 12 : 0,
    imageInputTokens: i === 9 ? 13 : 0,
    imageOutputTokens: i === 9 ? 14 : 0,
    costUsd: i % 9 === 4 ? null : 0.001 * (i + 1) + 0.0000001,
    costSource: i % 9 === 4 ? 'unpriced' : i % 2 ? 'computed' : 'reported',
    priceVersion: i % 2 ? 'router@2026-01' : null,
    streamed: i % 3 === 1,
    estimated: i % 10 === 3,
    finishReason: i % 7 === 3 ? null : 'stop',
    error: i % 7 === 3 ? 'rate limited' : null,
    userAgent: i % 2 ? 'claude-cli/1.0' : null,
    forwardedFor: i === 2 ? '10.0.0.1' : null,
    notes: i === 4 ? '{"cache":"miss"}' : null,
    sessionId: i % 3 === 2 ? null : `conv-${i % 4}`,
    servedModel: i === 6 ? 'openai-m0-2026-01-01' : null,
    ...over,
  };
}

const ROWS = 60;
const stored = (rows: UsageRecord[], prefix = 'n1:') => rows.map((r, i): StoredUsage => ({ rec: r, uid: `${prefix}${i}` }));
const dataset = () => Array.from({ length: ROWS }, (_, i) => rec(i));
const range = { from: T0 - MIN, to: T0 + ROWS * 7 * MIN + MIN };

/** Every read of the port over the dataset, as one comparable object. */
async function allReads(repo: UsageRepository): Promise<Record<string, unknown>> {
  const out: Record<string, unknown> = {};
  out.summary = await repo.summary(range);
  for (const by of ['provider', 'model', 'key', 'connection', 'endpoint', 'combo'] as const) out[`breakdown.${by}`] = await repo.breakdown(by, range);
  for (const bucket of ['minute', 'hour', 'day'] as const) out[`timeseries.${bucket}`] = await repo.timeseries(bucket, range, {});
  out['timeseries.filtered'] = await repo.timeseries('hour', range, { provider: 'openai', key: 'key-1' });
  out['timeseries.model'] = await repo.timeseries('hour', range, { model: 'anthropic/anthropic-m1' });
  out['timeseries.combo'] = await repo.timeseries('hour', range, { combo: 'my-combo' });
  for (const by of ['provider', 'model', 'key', 'combo'] as const) out[`grouped.${by}`] = await repo.groupedTimeseries('hour', range, {}, by, 2);
  out.logs = await repo.logs({ limit: 25 });
  out['logs.page2'] = await repo.logs({ limit: 25, before: 30 });
  out['logs.filtered'] = await repo.logs({ limit: 100, provider: 'anthropic', status: { min: 400, max: 599 }, from: T0, to: T0 + 300 * MIN });
  out['logs.model'] = await repo.logs({ limit: 100, model: 'my-combo', key: 'key-1' });
  out['logs.exact'] = await repo.logs({ limit: 100, status: { exact: 429 } });
  out.telemetry = await repo.telemetry(T0 - MIN);
  out.sessions = await repo.sessions({}, { limit: 2, perSession: 2 });
  out['sessions.page2'] = await repo.sessions({}, { limit: 2, perSession: 1, after: { last: (out.sessions as { sessions: Array<{ lastAt: string }> }).sessions[1] ? Date.parse((out.sessions as { sessions: Array<{ lastAt: string }> }).sessions[1]!.lastAt) : 0, id: 'conv-1' } });
  out['sessions.filtered'] = await repo.sessions({ provider: 'openai', q: 'nv-0', from: T0, to: range.to }, { limit: 10, perSession: 0 });
  out.sessionRequests = await repo.sessionRequests('conv-0', { limit: 4 });
  out['sessionRequests.page2'] = await repo.sessionRequests('conv-0', { limit: 4, after: 9 });
  out.cacheFacts = await repo.sessionCacheFacts('conv-1');
  for (const by of ['provider', 'model', 'account'] as const) {
    for (const metric of ['requests', 'tokens', 'cost'] as const) out[`diversity.${by}.${metric}`] = await repo.diversity(by, metric, 'hour', range);
  }
  return out;
}

const answers: Record<string, Record<string, unknown>> = {};
const adapters = storageAdapters();

for (const adapter of adapters) {
  describe.skipIf(adapter.unavailable)(adapterTitle('UsageRepository', adapter), () => {
    const open = async (): Promise<UsageRepository> => new SqlUsageRepository((await adapter.open()).driver);

    it('stores rows field for field and reads them back newest first, with every column (parts, cost source, served model, session)', async () => {
      const repo = await open();
      const rows = dataset().slice(0, 10);
      expect(await repo.insert(stored(rows))).toBe(10);
      const page = await repo.logs({ limit: 100 });
      expect(page.nextCursor).toBeNull();
      expect(page.logs.map((e) => e.id)).toEqual([10, 9, 8, 7, 6, 5, 4, 3, 2, 1]);
      const back = [...page.logs].reverse();
      rows.forEach((r, i) => {
        const { ts, ...rest } = r;
        expect(back[i]).toEqual({ id: i + 1, timestamp: new Date(ts).toISOString(), providerId: r.provider, ...rest });
      });
    });

    it.skipIf(adapter.name === 'sqlite')('stores a row once however often its batch is stored (uids), and counts only what it inserted', async () => {
      const repo = await open();
      expect(repo.dedupes).toBe(true);
      const rows = stored(Array.from({ length: 250 }, (_, i) => rec(i)));
      expect(await repo.insert(rows.slice(0, 120))).toBe(120);
      // The whole batch again (its first part was stored before the outcome was lost), over the 200-row statement boundary.
      expect(await repo.insert(rows)).toBe(130);
      expect(await repo.insert(rows)).toBe(0);
      expect((await repo.summary({ from: 0, to: 8e15 })).requests).toBe(250);
      // Another node's rows with the same content but their own uids are rows of their own.
      expect(await repo.insert(stored(dataset().slice(0, 3), 'n2:'))).toBe(3);
      expect((await repo.summary({ from: 0, to: 8e15 })).requests).toBe(253);
    });

    it('prunes rows older than a time, at most a limit per call', async () => {
      const repo = await open();
      await repo.insert(stored(dataset()));
      const cut = T0 + 30 * 7 * MIN;
      expect(await repo.pruneBefore(cut, 20)).toBe(20);
      expect(await repo.pruneBefore(cut, 20)).toBe(10);
      expect(await repo.pruneBefore(cut, 20)).toBe(0);
      const left = await repo.logs({ limit: 100 });
      expect(left.logs).toHaveLength(30);
      expect(left.logs.every((e) => Date.parse(e.timestamp) >= cut)).toBe(true);
    });

    it('answers every analytics, log, telemetry, session and diversity read (checked by hand here, against the other adapter below)', async () => {
      const repo = await open();
      await repo.insert(stored(dataset()));
      const out = await allReads(repo);
      answers[adapter.name] = out;
      const rows = dataset();
      const summary = out.summary as { requests: number; errors: number; traces: number; unpricedRequests: number; costUsd: number; tokens: { input: number; audioInput: number }; streamed: number };
      expect(summary.requests).toBe(ROWS);
      expect(summary.traces).toBe(ROWS / 2);
      expect(summary.errors).toBe(rows.filter((r) => r.status >= 400).length);
      expect(summary.unpricedRequests).toBe(rows.filter((r) => r.costSource === 'unpriced').length);
      expect(summary.tokens.input).toBe(rows.reduce((n, r) => n + r.tokensIn, 0));
      expect(summary.tokens.audioInput).toBe(11);
      expect(summary.streamed).toBe(rows.filter((r) => r.streamed).length);
      expect(summary.costUsd).toBeCloseTo(rows.reduce((n, r) => n + (r.costUsd ?? 0), 0), 9);
      const byKey = out['breakdown.key'] as Array<{ key: string | null; requests: number }>;
      expect(byKey.map((r) => r.key).sort()).toEqual([null, 'key-0', 'key-1', 'key-2'].sort());
      expect(byKey.reduce((n, r) => n + r.requests, 0)).toBe(ROWS);
      const hours = out['timeseries.hour'] as Array<{ requests: number }>;
      expect(hours.reduce((n, p) => n + p.requests, 0)).toBe(ROWS);
      const grouped = out['grouped.provider'] as { series: unknown[]; otherGroups: number };
      expect(grouped.series).toHaveLength(2);
      expect(grouped.otherGroups).toBe(1);
      const logs = out.logs as { logs: Array<{ id: number }>; nextCursor: string | null };
      expect(logs.logs.map((e) => e.id)).toEqual(Array.from({ length: 25 }, (_, i) => ROWS - i));
      expect(logs.nextCursor).toBe(String(ROWS - 24));
      expect((out['logs.exact'] as { logs: unknown[] }).logs).toHaveLength(rows.filter((r) => r.status === 429).length);
      const sessions = out.sessions as { sessions: Array<{ sessionId: string; providers: string[]; requests: number; recent: unknown[] }>; nextCursor: string | null };
      expect(sessions.sessions).toHaveLength(2);
      expect(sessions.nextCursor).not.toBeNull();
      const first = sessions.sessions[0]!;
      const ofFirst = rows.filter((r) => r.sessionId === first.sessionId);
      expect(first.requests).toBe(ofFirst.length);
      expect(first.providers).toEqual([...new Set(ofFirst.map((r) => r.provider))].sort());
      expect(first.recent).toHaveLength(2);
      const filtered = out['sessions.filtered'] as { sessions: Array<{ sessionId: string; recent: unknown[] }> };
      expect(filtered.sessions.map((s) => s.sessionId)).toEqual(['conv-0']);
      const facts = out.cacheFacts as { tokensIn: number; accounts: unknown[] };
      expect(facts.tokensIn).toBe(rows.filter((r) => r.sessionId === 'conv-1' && r.status < 400).reduce((n, r) => n + r.tokensIn, 0));
      const telemetry = out.telemetry as Array<{ provider: string; requests: number; latencyMs: { p50: number | null } }>;
      expect(telemetry.map((t) => t.provider)).toEqual(['anthropic', 'openai', 'xai']);
      expect(telemetry.every((t) => t.latencyMs.p50 !== null)).toBe(true);
      const div = out['diversity.provider.requests'] as { groups: Array<{ requests: number }>; total: number };
      expect(div.total).toBe(ROWS);
    });
  });
}

describe.skipIf(adapters.some((a) => a.unavailable))('UsageRepository on SQLite and PostgreSQL', () => {
  it('gives identical answers to every read over the same rows', () => {
    expect(answers.sqlite).toBeDefined();
    expect(answers.postgres).toBeDefined();
    for (const key of Object.keys(answers.sqlite!)) expect({ key, value: answers.postgres![key] }).toEqual({ key, value: answers.sqlite![key] });
  });
});
