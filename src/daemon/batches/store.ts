import { randomBytes } from 'node:crypto';
import type { BatchStatus } from '../../shared/records.js';

/**
 * The records of the Batch API (migrations/0017_batches.sql, migrations/pg/0030_batches.sql): file
 * metadata, batches and the per-line progress. They are stored through the ports of batches/port.ts
 * (SQL in batches/sql-repository.ts only); this file holds their shapes.
 */

/** A stored file's metadata (its content is the FileContents port's: batches/contents.ts). */
export interface FileRow {
  id: string;
  key_id: string | null;
  purpose: string;
  filename: string;
  bytes: number;
  lines: number;
  created_at: number;
  /** Unix seconds after which the file is deleted (OpenAI's `expires_after`); null: never. */
  expires_at?: number | null;
}

export type { BatchStatus };

/** Statuses a batch never leaves. */
export const FINAL_STATUSES: ReadonlySet<string> = new Set(['completed', 'failed', 'expired', 'cancelled']);

/** A batch's native-mode state: the provider batch it was submitted as. */
export interface NativeState {
  provider: 'openai' | 'anthropic';
  /** The router model every line named (`openai/gpt-4o-mini`). */
  model: string;
  /** The account holding the provider batch (saved when the submission is sent to it; batches/native.ts). */
  connectionId?: string;
  remoteId?: string;
  remoteInputFileId?: string;
  /** Set once the provider was asked to cancel. */
  cancelRequested?: boolean;
  /** Set when that cancel was router's completion window closing: its unfinished lines are `batch_expired`. */
  expired?: boolean;
  /**
   * Unix seconds when router began submitting the provider batch, saved before the provider hears of it.
   * Set without `remoteId` after a restart, it means the last run may have been killed between the
   * provider accepting the batch and router saving its id: the provider's batches are searched first.
   */
  submitting?: number;
}

export interface BatchRow {
  id: string;
  key_id: string | null;
  endpoint: string;
  input_file_id: string;
  completion_window: string;
  mode: 'local' | 'native';
  status: BatchStatus;
  metadata: string | null;
  total: number;
  completed: number;
  failed: number;
  output_file_id: string | null;
  error_file_id: string | null;
  errors: string | null;
  native: string | null;
  created_at: number;
  in_progress_at: number | null;
  expires_at: number | null;
  finalizing_at: number | null;
  completed_at: number | null;
  failed_at: number | null;
  expired_at: number | null;
  cancelling_at: number | null;
  cancelled_at: number | null;
}

/** A page of a list in OpenAI's cursor shape. */
export interface Page<T> {
  data: T[];
  has_more: boolean;
}

/** Unix seconds now. */
export function nowSeconds(): number {
  return Math.floor(Date.now() / 1000);
}

/** A new id with OpenAI's prefix style (`file-...`, `batch_...`, `batch_req_...`). */
export function newId(prefix: string): string {
  return `${prefix}${randomBytes(12).toString('hex')}`;
}

export const TIMESTAMP_OF: Partial<Record<BatchStatus, keyof BatchRow>> = {
  in_progress: 'in_progress_at',
  finalizing: 'finalizing_at',
  completed: 'completed_at',
  failed: 'failed_at',
  expired: 'expired_at',
  cancelling: 'cancelling_at',
  cancelled: 'cancelled_at',
};

/** Statuses of a batch that has not ended (a restart or another node picks it up). */
export const UNFINISHED_STATUSES = ['validating', 'in_progress', 'finalizing', 'cancelling'] as const;
