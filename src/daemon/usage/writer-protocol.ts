/**
 * What the usage writer (writer.ts, main thread) and its worker (writer-worker.ts) share: the column list,
 * the flat row encoding and the message shapes. Kept free of imports so the worker loads nothing else.
 */
import type { UsageRecord } from './record.js';

/** usage_log columns in the order of the flat encoding. */
export const USAGE_COLUMNS = [
  'ts', 'trace_id', 'api_key_id', 'endpoint', 'client_format', 'provider', 'model', 'requested_model', 'connection_id',
  'combo', 'status', 'latency_ms', 'upstream_ms', 'tokens_in', 'tokens_out', 'cache_read_tokens', 'cache_write_tokens',
  'reasoning_tokens', 'cost_usd', 'streamed', 'estimated', 'finish_reason', 'error', 'user_agent', 'forwarded_for', 'notes',
  'session_id', 'cost_source', 'price_version', 'served_model', 'cache_write_1h_tokens', 'audio_in_tokens', 'audio_out_tokens',
  'image_in_tokens', 'image_out_tokens',
] as const;

/** Values per row in the flat encoding. */
export const FIELDS = USAGE_COLUMNS.length;

/** Rows per multi-row INSERT statement (35 x 32 = 1,120 parameters, under SQLite's 32,766). */
export const ROWS_PER_STATEMENT = 32;

/** `INSERT INTO usage_log (...) VALUES (...), (...)` for `rows` rows. */
export function insertSql(rows: number): string {
  const one = `(${new Array(FIELDS).fill('?').join(', ')})`;
  return `INSERT INTO usage_log (${USAGE_COLUMNS.join(', ')}) VALUES ${new Array(rows).fill(one).join(', ')}`;
}

/**
 * Rows as one flat array of primitives (FIELDS values per row, booleans as 0/1): one array of strings and
 * numbers is cheaper to structured-clone than as many objects, and binds to a statement as it is.
 */
export function encodeRows(rows: readonly UsageRecord[]): unknown[] {
  const out: unknown[] = [];
  for (const r of rows) {
    out.push(
      r.ts, r.traceId, r.apiKeyId, r.endpoint, r.clientFormat, r.provider, r.model, r.requestedModel, r.connectionId,
      r.combo, r.status, r.latencyMs, r.upstreamMs, r.tokensIn, r.tokensOut, r.cacheReadTokens, r.cacheWriteTokens,
      r.reasoningTokens, r.costUsd ?? 0, r.streamed ? 1 : 0, r.estimated ? 1 : 0, r.finishReason, r.error, r.userAgent,
      r.forwardedFor, r.notes, r.sessionId ?? null, r.costSource, r.priceVersion, r.servedModel ?? null,
      r.cacheWrite1hTokens ?? 0, r.audioInputTokens ?? 0, r.audioOutputTokens ?? 0, r.imageInputTokens ?? 0, r.imageOutputTokens ?? 0,
    );
  }
  return out;
}

/** Offsets in the flat encoding used to recognize a row (duplicate check after a worker failure). */
export const TS_FIELD = 0;
export const TRACE_FIELD = 1;
export const LATENCY_FIELD = 11;

/** Set up of the worker (workerData). */
export interface WriterInit {
  /** Database file (the daemon's router.db, WAL mode). */
  file: string;
  /** Acknowledgements go back on this port, so shutdown can read them synchronously (receiveMessageOnPort). */
  port: import('node:worker_threads').MessagePort;
  /** [0]: 0 running, 1 closed after writing everything, 2 failed. The worker notifies on change. */
  signal: Int32Array;
  busyTimeoutMs: number;
}

/**
 * Main thread -> worker, in order: a batch to write in one transaction (`sync`: commit it with
 * synchronous = FULL, an fsync of the WAL), or the final close.
 */
export type ToWriter = { t: 'rows'; seq: number; data: unknown[]; sync?: boolean } | { t: 'close' };

/** Worker -> main thread: a batch's outcome (written 0 and an error when its transaction failed). */
export type FromWriter = { t: 'done'; seq: number; written: number; error?: string } | { t: 'fatal'; error: string };

export const SIGNAL_RUNNING = 0;
export const SIGNAL_CLOSED = 1;
export const SIGNAL_FAILED = 2;
