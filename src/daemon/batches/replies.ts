import { z } from 'zod';
import { BATCH_STATUSES, type BatchView } from '../../shared/records.js';
import { rawReply } from '../http/replies.js';

/**
 * Reply schemas of the Batch API routes (RouteDef.reply): OpenAI's file and batch objects and its cursor
 * lists, as the `openai` SDK reads them (times in Unix seconds).
 */

const unixTime = z.number();

export const fileReply = z.object({
  id: z.string(),
  object: z.literal('file'),
  bytes: z.number(),
  created_at: unixTime,
  filename: z.string(),
  purpose: z.string(),
  status: z.literal('processed'),
  expires_at: unixTime.nullable(),
  status_details: z.null(),
});

/** A file's bytes: an input file as uploaded, or a batch's output or error JSONL. */
export const fileContentReply = rawReply('application/octet-stream');

export const fileDeletedReply = z.object({ id: z.string(), object: z.literal('file'), deleted: z.literal(true) });

export const batchReply = z.object({
  id: z.string(),
  object: z.literal('batch'),
  endpoint: z.string(),
  /** Why the batch failed as a whole (OpenAI's BatchError list); null otherwise. */
  errors: z
    .object({
      object: z.literal('list'),
      data: z.array(z.object({ code: z.string(), message: z.string(), line: z.number().optional() })),
    })
    .nullable(),
  input_file_id: z.string(),
  completion_window: z.string(),
  status: z.enum(BATCH_STATUSES),
  output_file_id: z.string().nullable(),
  error_file_id: z.string().nullable(),
  created_at: unixTime,
  in_progress_at: unixTime.nullable(),
  expires_at: unixTime.nullable(),
  finalizing_at: unixTime.nullable(),
  completed_at: unixTime.nullable(),
  failed_at: unixTime.nullable(),
  expired_at: unixTime.nullable(),
  cancelling_at: unixTime.nullable(),
  cancelled_at: unixTime.nullable(),
  request_counts: z.object({ total: z.number(), completed: z.number(), failed: z.number() }),
  metadata: z.record(z.string(), z.string()).nullable(),
  /** router's: `local` (lines through router's own executor) or `native` (the provider's batch API). */
  mode: z.enum(['local', 'native']),
  /** router's: the API key that created it (null: a management caller). */
  api_key_id: z.string().nullable(),
}) satisfies z.ZodType<BatchView>;

/** OpenAI's cursor-list envelope. */
function cursorList<T extends z.ZodType>(item: T) {
  return z.object({ object: z.literal('list'), data: z.array(item), first_id: z.string().nullable(), last_id: z.string().nullable(), has_more: z.boolean() });
}

export const fileListReply = cursorList(fileReply);
export const batchListReply = cursorList(batchReply);

export const manageBatchListReply = z.object({ batches: z.array(batchReply), has_more: z.boolean() });
export const batchesDeletedReply = z.object({ deleted: z.number() });
export const batchDeletedReply = z.object({ id: z.string(), deleted: z.literal(true) });
