/**
 * Label cardinality: usage records naming 10,000 distinct models (and as many combos) create at most the
 * cap of model series plus one "other" series per family, and their counts are all still there.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { bootServices, closeServices } from '../../src/daemon/boot.js';
import { MAX_MODEL_LABELS } from '../../src/daemon/observability/metrics.js';
import type { Services } from '../../src/daemon/services.js';
import type { UsageRecord } from '../../src/daemon/usage/record.js';
import { parseExposition, samples, total } from './exposition.js';

let home: string;
let services: Services;
beforeAll(async () => {
  home = mkdtempSync(join(tmpdir(), 'router-metrics-card-'));
  services = await bootServices({ home, host: '127.0.0.1', port: 0 });
});
afterAll(() => {
  if (services) closeServices(services);
  rmSync(home, { recursive: true, force: true });
});

function record(i: number): UsageRecord {
  return {
    ts: Date.now(), traceId: `t${i}`, apiKeyId: `key-${i}`, endpoint: '/v1/chat/completions', clientFormat: 'openai-chat',
    provider: 'openai', model: `model-${i}`, requestedModel: `openai/model-${i}`, connectionId: null, combo: `combo-${i}`,
    status: 200, latencyMs: 12, upstreamMs: 10, tokensIn: 3, tokensOut: 5, cacheReadTokens: 0, cacheWriteTokens: 0,
    reasoningTokens: 0, costUsd: 0.001, costSource: 'computed', priceVersion: 'router@2026-11', streamed: false, estimated: false, finishReason: 'stop', error: null,
    userAgent: null, forwardedFor: null, notes: null,
  };
}

it('10,000 distinct model names do not create 10,000 series', async () => {
  for (let i = 0; i < 10_000; i++) services.metrics.record(record(i));
  const m = parseExposition((await services.metrics.scrape()).text);
  const requests = samples(m, 'router_requests_total');
  expect(requests.length).toBeLessThanOrEqual(MAX_MODEL_LABELS + 1);
  expect(new Set(requests.map((s) => s.labels.model)).size).toBe(MAX_MODEL_LABELS + 1);
  expect(total(m, 'router_requests_total', { model: 'other' })).toBe(10_000 - MAX_MODEL_LABELS);
  expect(total(m, 'router_requests_total')).toBe(10_000);
  expect(total(m, 'router_tokens_total', { kind: 'output' })).toBe(50_000);
  expect(samples(m, 'router_tokens_total').length).toBeLessThanOrEqual(5 * (MAX_MODEL_LABELS + 1));
  expect(samples(m, 'router_request_duration_seconds_count').length).toBeLessThanOrEqual(MAX_MODEL_LABELS + 1);
  // No key ids anywhere in the exposition.
  for (const s of m) expect(Object.values(s.labels).some((v) => v.startsWith('key-'))).toBe(false);
});
