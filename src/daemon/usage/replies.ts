import { z } from 'zod';
import type { BreakdownRow, LogEntry, Point, ProviderTelemetry, SeriesGroup, Summary } from '../../shared/records.js';
import type { PriceEntry } from '../../shared/pricing.js';
import { isoTime } from '../http/replies.js';
import type { ProcessStats } from './process-stats.js';
import type { UsageService } from './service.js';

/** Reply schemas of the usage, request log, telemetry and price table routes (RouteDef.reply). */

const tokenTotals = z.object({
  input: z.number(),
  output: z.number(),
  cacheRead: z.number(),
  cacheWrite: z.number(),
  cacheWrite1h: z.number(),
  reasoning: z.number(),
  audioInput: z.number(),
  audioOutput: z.number(),
  imageInput: z.number(),
  imageOutput: z.number(),
  total: z.number(),
});
const totals = {
  requests: z.number(),
  errors: z.number(),
  tokens: tokenTotals,
  costUsd: z.number(),
  unpricedRequests: z.number(),
  avgLatencyMs: z.number().nullable(),
};
const groupLabel = { key: z.string().nullable(), providerId: z.string().optional(), name: z.string().nullable().optional() };

export const summaryReply = z.object({
  ...totals,
  from: isoTime,
  to: isoTime,
  traces: z.number(),
  streamed: z.number(),
  estimated: z.number(),
}) satisfies z.ZodType<Summary>;

const breakdownRow = z.object({ ...totals, ...groupLabel }) satisfies z.ZodType<BreakdownRow>;
export const breakdownReply = z.object({ by: z.string(), from: isoTime, to: isoTime, rows: z.array(breakdownRow) });

const point = z.object({
  t: isoTime,
  requests: z.number(),
  errors: z.number(),
  tokensIn: z.number(),
  tokensOut: z.number(),
  costUsd: z.number(),
  unpricedRequests: z.number(),
}) satisfies z.ZodType<Point>;
export const timeseriesReply = z.object({
  bucket: z.string(),
  from: isoTime,
  to: isoTime,
  points: z.array(point),
  groupBy: z.string().optional(),
  series: z.array(z.object({ ...groupLabel, points: z.array(point) }) satisfies z.ZodType<SeriesGroup>).optional(),
  otherGroups: z.number().optional(),
});

/** One request-log entry (`GET /api/logs`, the live channel, a session's requests). */
export const logEntry = z.object({
  id: z.number(),
  timestamp: isoTime,
  traceId: z.string(),
  apiKeyId: z.string().nullable(),
  endpoint: z.string(),
  clientFormat: z.string().nullable(),
  provider: z.string(),
  providerId: z.string(),
  model: z.string(),
  requestedModel: z.string().nullable(),
  connectionId: z.string().nullable(),
  combo: z.string().nullable(),
  status: z.number(),
  latencyMs: z.number(),
  upstreamMs: z.number().nullable(),
  tokensIn: z.number(),
  tokensOut: z.number(),
  cacheReadTokens: z.number(),
  cacheWriteTokens: z.number(),
  reasoningTokens: z.number(),
  cacheWrite1hTokens: z.number().optional(),
  audioInputTokens: z.number().optional(),
  audioOutputTokens: z.number().optional(),
  imageInputTokens: z.number().optional(),
  imageOutputTokens: z.number().optional(),
  costUsd: z.number().nullable(),
  costSource: z.enum(['reported', 'computed', 'unpriced']).nullable(),
  priceVersion: z.string().nullable(),
  streamed: z.boolean(),
  estimated: z.boolean(),
  finishReason: z.string().nullable(),
  error: z.string().nullable(),
  userAgent: z.string().nullable(),
  forwardedFor: z.string().nullable(),
  notes: z.string().nullable(),
  sessionId: z.string().nullable().optional(),
  servedModel: z.string().nullable().optional(),
  apiKeyName: z.string().nullable().optional(),
  connectionName: z.string().nullable().optional(),
}) satisfies z.ZodType<LogEntry>;
export const logsReply = z.object({ logs: z.array(logEntry), nextCursor: z.string().nullable() });

const percentiles = z.object({ p50: z.number().nullable(), p95: z.number().nullable(), p99: z.number().nullable() });
const providerTelemetry = z.object({
  provider: z.string(),
  providerId: z.string(),
  requests: z.number(),
  errors: z.number(),
  errorRate: z.number(),
  latencyMs: percentiles,
  upstreamMs: percentiles,
  overheadMs: percentiles,
}) satisfies z.ZodType<ProviderTelemetry>;
const processStats = z.object({
  rssBytes: z.number(),
  heapUsedBytes: z.number(),
  heapTotalBytes: z.number(),
  externalBytes: z.number(),
  openFds: z.number().nullable(),
  eventLoopDelayMs: z.object({ p50: z.number(), p99: z.number(), max: z.number(), sinceMs: z.number() }).nullable(),
}) satisfies z.ZodType<ProcessStats>;
export const telemetryReply = z.object({
  window: z.object({ from: isoTime, to: isoTime, minutes: z.number() }),
  providers: z.array(providerTelemetry),
  recorder: z.object({
    requestsPerSecond: z.number(),
    inFlight: z.number(),
    queued: z.number(),
    dropped: z.number(),
    written: z.number(),
    estimating: z.number(),
    estimationSkipped: z.number(),
    writer: z.enum(['worker', 'main', 'postgres']),
    spooled: z.number(),
  }) satisfies z.ZodType<ReturnType<UsageService['stats']> & { requestsPerSecond: number; inFlight: number }>,
  process: processStats,
});

export const priceEntry = z.object({
  provider: z.string(),
  model: z.string(),
  input: z.number(),
  output: z.number(),
  cacheRead: z.number().nullable(),
  cacheWrite: z.number().nullable(),
  reasoning: z.number().nullable(),
  source: z.enum(['default', 'override']),
  hasDefault: z.boolean(),
  imageInput: z.number().optional(),
  imageOutput: z.number().optional(),
  audioInput: z.number().optional(),
  audioOutput: z.number().optional(),
  perImage: z.union([z.number(), z.record(z.string(), z.number())]).optional(),
  perAudioMinute: z.number().optional(),
  minAudioSeconds: z.number().optional(),
  perMillionCharacters: z.number().optional(),
  perSearchUnit: z.number().optional(),
}) satisfies z.ZodType<PriceEntry>;
export const pricingReply = z.object({ pricing: z.array(priceEntry) });
export const priceDeletedReply = z.object({ deleted: z.literal(true), pricing: priceEntry.nullable() });
