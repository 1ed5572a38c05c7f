import { z } from 'zod';
import { BATCH_STATUSES } from '../../shared/records.js';
import { RouterError } from '../http/errors.js';
import { json, route, type RouteDef } from '../http/routes.js';
import { fileObject } from './files.js';
import { batchDeletedReply, batchesDeletedReply, batchListReply, batchReply, fileContentReply, fileDeletedReply, fileListReply, fileReply, manageBatchListReply } from './replies.js';
import { ownerOf } from './service.js';
import { FINAL_STATUSES } from './store.js';

/**
 * The Batch API (OpenAI's `/v1/files` and `/v1/batches`, client tier: each API key sees its own files and
 * batches) and its management routes (`/api/batches`: every batch, status filters, deletion).
 */

const createBody = z.object({
  input_file_id: z.string().min(1).max(200),
  endpoint: z.string().min(1).max(200),
  completion_window: z.string().min(1).max(20),
  metadata: z.record(z.string().max(64), z.string().max(512)).refine((m) => Object.keys(m).length <= 16, 'at most 16 keys').nullable().optional(),
  mode: z.enum(['local', 'native', 'auto']).optional(),
});

const fileList = z.object({
  purpose: z.string().max(50).optional(),
  limit: z.coerce.number().int().min(1).max(10_000).default(10_000),
  after: z.string().max(200).optional(),
  order: z.enum(['asc', 'desc']).default('desc'),
});

const batchList = z.object({
  limit: z.coerce.number().int().min(1).max(100).default(20),
  after: z.string().max(200).optional(),
});

const statusList = z
  .string()
  .max(200)
  .transform((s) => s.split(',').map((x) => x.trim()).filter(Boolean))
  .refine((list) => list.every((x) => (BATCH_STATUSES as readonly string[]).includes(x)), `statuses: ${BATCH_STATUSES.join(', ')}`);

const manageList = z.object({
  status: statusList.optional(),
  limit: z.coerce.number().int().min(1).max(500).default(100),
  after: z.string().max(200).optional(),
});

/** OpenAI's cursor-list envelope. */
function list<T extends { id: string }>(data: T[], hasMore: boolean): Record<string, unknown> {
  return { object: 'list', data, first_id: data[0]?.id ?? null, last_id: data.at(-1)?.id ?? null, has_more: hasMore };
}

export const batchRoutes: RouteDef[] = [
  route({
    method: 'POST',
    path: '/v1/files',
    tier: 'client',
    tag: 'batch',
    summary: 'Upload a batch input file (multipart: file, purpose=batch, optional expires_after[anchor]/[seconds], default 30 days); JSONL checked line by line; 413 past batchFileMaxBytes or the key\'s filesMaxStoredBytesPerKey',
    rawBody: true,
    bodyTypes: ['multipart/form-data'],
    // The file's own limit (setting batchFileMaxBytes) is applied while it streams to disk.
    bodyLimit: Number.MAX_SAFE_INTEGER,
    reply: fileReply,
    handler: async ({ event, services, auth }) => {
      const settings = services.settings.get();
      const row = await services.batches.files.upload(event, ownerOf(auth) ?? null, settings.batchFileMaxBytes, settings.filesMaxStoredBytesPerKey);
      return json(200, fileObject(row));
    },
  }),
  route({
    method: 'GET',
    path: '/v1/files',
    tier: 'client',
    tag: 'batch',
    summary: 'List files (OpenAI shape: purpose, limit, after, order)',
    query: fileList,
    reply: fileListReply,
    handler: async ({ services, auth, query }) => {
      await services.batches.files.sweep();
      const page = await services.batches.store.listFiles({ keyId: ownerOf(auth), purpose: query.purpose, after: query.after, limit: query.limit, order: query.order });
      return list(page.data.map(fileObject) as { id: string }[], page.has_more);
    },
  }),
  route({
    method: 'GET',
    path: '/v1/files/:id',
    tier: 'client',
    tag: 'batch',
    summary: 'A file object',
    reply: fileReply,
    handler: async ({ services, auth, params }) => fileObject(await services.batches.files.get(params.id!, ownerOf(auth))),
  }),
  route({
    method: 'GET',
    path: '/v1/files/:id/content',
    tier: 'client',
    tag: 'batch',
    summary: "A file's content (an input file, or a batch's output or error JSONL)",
    reply: fileContentReply,
    handler: async ({ services, auth, params }) => services.batches.files.content(await services.batches.files.get(params.id!, ownerOf(auth)), services.version),
  }),
  route({
    method: 'DELETE',
    path: '/v1/files/:id',
    tier: 'client',
    tag: 'batch',
    summary: 'Delete a file (409 while an unfinished batch reads it)',
    reply: fileDeletedReply,
    handler: async ({ services, auth, params }) => {
      const row = await services.batches.files.get(params.id!, ownerOf(auth));
      if (await services.batches.fileInUse(row.id)) throw new RouterError(409, `File ${row.id} is the input of a batch that has not finished; cancel the batch first.`);
      await services.batches.files.remove(row.id);
      return { id: row.id, object: 'file', deleted: true };
    },
  }),
  route({
    method: 'POST',
    path: '/v1/batches',
    tier: 'client',
    tag: 'batch',
    summary: 'Create a batch {input_file_id, endpoint, completion_window, metadata?, mode?: local|native|auto}',
    body: createBody,
    reply: batchReply,
    handler: async ({ services, auth, body }) => services.batches.view(await services.batches.create(auth, body)),
  }),
  route({
    method: 'GET',
    path: '/v1/batches',
    tier: 'client',
    tag: 'batch',
    summary: 'List batches, newest first (after, limit)',
    query: batchList,
    reply: batchListReply,
    handler: async ({ services, auth, query }) => {
      const page = await services.batches.store.listBatches({ keyId: ownerOf(auth), after: query.after, limit: query.limit });
      return list(page.data.map((b) => services.batches.view(b)) as { id: string }[], page.has_more);
    },
  }),
  route({
    method: 'GET',
    path: '/v1/batches/:id',
    tier: 'client',
    tag: 'batch',
    summary: 'A batch object (request_counts update as lines finish)',
    reply: batchReply,
    handler: async ({ services, auth, params }) => services.batches.view(await services.batches.get(params.id!, ownerOf(auth))),
  }),
  route({
    method: 'POST',
    path: '/v1/batches/:id/cancel',
    tier: 'client',
    tag: 'batch',
    summary: 'Cancel a batch: lines in flight finish, the others are not sent',
    bodylessWithKey: true,
    reply: batchReply,
    handler: async ({ services, auth, params }) => services.batches.view(await services.batches.cancel(await services.batches.get(params.id!, ownerOf(auth)))),
  }),
  route({
    method: 'GET',
    path: '/api/batches',
    tier: 'management',
    tag: 'batch',
    summary: 'Every batch, newest first; ?status=in_progress,completed filters',
    query: manageList,
    reply: manageBatchListReply,
    handler: async ({ services, query }) => {
      const page = await services.batches.store.listBatches({ statuses: query.status, after: query.after, limit: query.limit });
      return { batches: page.data.map((b) => services.batches.view(b)), has_more: page.has_more };
    },
  }),
  route({
    method: 'DELETE',
    path: '/api/batches/completed',
    tier: 'management',
    tag: 'batch',
    summary: 'Delete every finished batch (completed, failed, expired, cancelled) and its output and error files',
    reply: batchesDeletedReply,
    handler: async ({ services }) => {
      let deleted = 0;
      for (;;) {
        const page = await services.batches.store.listBatches({ statuses: [...FINAL_STATUSES], limit: 500 });
        for (const b of page.data) await services.batches.remove(b);
        deleted += page.data.length;
        if (!page.has_more) break;
      }
      return { deleted };
    },
  }),
  route({
    method: 'GET',
    path: '/api/batches/:id',
    tier: 'management',
    tag: 'batch',
    summary: 'One batch',
    reply: batchReply,
    handler: async ({ services, params }) => services.batches.view(await services.batches.get(params.id!, undefined)),
  }),
  route({
    method: 'POST',
    path: '/api/batches/:id/cancel',
    tier: 'management',
    tag: 'batch',
    summary: 'Cancel a batch',
    reply: batchReply,
    handler: async ({ services, params }) => services.batches.view(await services.batches.cancel(await services.batches.get(params.id!, undefined))),
  }),
  route({
    method: 'DELETE',
    path: '/api/batches/:id',
    tier: 'management',
    tag: 'batch',
    summary: 'Delete a finished batch and its output and error files (409 while it runs)',
    reply: batchDeletedReply,
    handler: async ({ services, params }) => {
      await services.batches.remove(await services.batches.get(params.id!, undefined));
      return { id: params.id, deleted: true };
    },
  }),
];
