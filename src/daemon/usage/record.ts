import type { LogEntry, UsageRecord } from '../../shared/records.js';

export type { LogEntry, UsageRecord };

/** The row shape of the usage_log table. */
export interface UsageRow {
  id: number;
  ts: number;
  trace_id: string;
  api_key_id: string | null;
  endpoint: string;
  client_format: string | null;
  provider: string;
  model: string;
  requested_model: string | null;
  connection_id: string | null;
  combo: string | null;
  status: number;
  latency_ms: number;
  upstream_ms: number | null;
  tokens_in: number;
  tokens_out: number;
  cache_read_tokens: number;
  cache_write_tokens: number;
  reasoning_tokens: number;
  /** Migration 0026: the 1-hour part of the cache writes, audio and image parts of the totals. */
  cache_write_1h_tokens?: number;
  audio_in_tokens?: number;
  audio_out_tokens?: number;
  image_in_tokens?: number;
  image_out_tokens?: number;
  cost_usd: number;
  cost_source?: string | null;
  price_version?: string | null;
  streamed: number;
  estimated: number;
  finish_reason: string | null;
  error: string | null;
  user_agent: string | null;
  forwarded_for: string | null;
  notes?: string | null;
  session_id?: string | null;
  served_model?: string | null;
}


/**
 * The record as the live channel shows it: `timestamp` (ISO 8601) instead of `ts`, `provider` as people
 * read it (`label`: a node's prefix), `providerId` the stored id.
 */
export function publicRecord(r: UsageRecord, label: (id: string) => string): { timestamp: string; providerId: string } & Omit<UsageRecord, 'ts'> {
  const { ts, ...rest } = r;
  return { timestamp: new Date(ts).toISOString(), ...rest, provider: label(r.provider), providerId: r.provider };
}

/** A stored row as the API returns it. */
export function logEntry(row: UsageRow): LogEntry {
  return {
    id: row.id,
    timestamp: new Date(row.ts).toISOString(),
    traceId: row.trace_id,
    apiKeyId: row.api_key_id,
    endpoint: row.endpoint,
    clientFormat: row.client_format,
    provider: row.provider,
    providerId: row.provider,
    model: row.model,
    requestedModel: row.requested_model,
    connectionId: row.connection_id,
    combo: row.combo,
    status: row.status,
    latencyMs: row.latency_ms,
    upstreamMs: row.upstream_ms,
    tokensIn: row.tokens_in,
    tokensOut: row.tokens_out,
    cacheReadTokens: row.cache_read_tokens,
    cacheWriteTokens: row.cache_write_tokens,
    reasoningTokens: row.reasoning_tokens,
    cacheWrite1hTokens: row.cache_write_1h_tokens ?? 0,
    audioInputTokens: row.audio_in_tokens ?? 0,
    audioOutputTokens: row.audio_out_tokens ?? 0,
    imageInputTokens: row.image_in_tokens ?? 0,
    imageOutputTokens: row.image_out_tokens ?? 0,
    // An unpriced row stores 0 (the column is NOT NULL) and reads back as null: never a silent $0.
    costUsd: row.cost_source === 'unpriced' ? null : row.cost_usd,
    costSource: (row.cost_source ?? null) as LogEntry['costSource'],
    priceVersion: row.price_version ?? null,
    streamed: row.streamed === 1,
    estimated: row.estimated === 1,
    finishReason: row.finish_reason,
    error: row.error,
    userAgent: row.user_agent,
    forwardedFor: row.forwarded_for,
    notes: row.notes ?? null,
    sessionId: row.session_id ?? null,
    servedModel: row.served_model ?? null,
  };
}
