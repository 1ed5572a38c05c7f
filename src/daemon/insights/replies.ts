import { z } from 'zod';
import type { CliToolChange } from '../../shared/observability.js';
import { backupReply } from '../backups/routes.js';
import { isoTime } from '../http/replies.js';
import { exchangeSide } from '../inspect/routes.js';
import { logEntry } from '../usage/replies.js';
import type { DiversityGroup, DiversityPoint } from './diversity.js';
import type { SessionAccount, SessionSummary } from './sessions.js';
import type { StorageHealth } from './storage.js';
import type { TranslationEntry } from './translator-history.js';

/** Reply schemas of the observability routes (RouteDef.reply). */

const cursor = z.string().nullable();

const translationEntry = z.object({
  id: z.number(),
  traceId: z.string(),
  at: isoTime,
  endpoint: z.string(),
  clientFormat: z.string(),
  upstreamFormat: z.string(),
  passthrough: z.boolean(),
  provider: z.string(),
  model: z.string(),
  stream: z.boolean(),
  status: z.number(),
  dropped: z.array(z.string()),
  client: z.object({ request: exchangeSide, response: exchangeSide }),
  upstream: z.object({ request: exchangeSide, response: exchangeSide }),
}) satisfies z.ZodType<TranslationEntry>;

export const translatorHistoryReply = z.object({ recording: z.boolean(), size: z.number(), entries: z.array(translationEntry), nextCursor: cursor });

const sessionSummary = z.object({
  sessionId: z.string(),
  firstAt: isoTime,
  lastAt: isoTime,
  requests: z.number(),
  traces: z.number(),
  errors: z.number(),
  tokensIn: z.number(),
  tokensOut: z.number(),
  cacheReadTokens: z.number(),
  accountsUsed: z.number(),
  costUsd: z.number(),
  unpricedRequests: z.number(),
  providers: z.array(z.string()),
  models: z.array(z.string()),
  apiKeyIds: z.array(z.string()),
  recent: z.array(logEntry),
}) satisfies z.ZodType<SessionSummary>;

export const sessionsReply = z.object({ sessions: z.array(sessionSummary), nextCursor: cursor });

const sessionAccount = z.object({
  connectionId: z.string().nullable(),
  name: z.string().nullable(),
  provider: z.string(),
  providerId: z.string(),
  requests: z.number(),
  tokensIn: z.number(),
  cacheReadTokens: z.number(),
}) satisfies z.ZodType<SessionAccount>;

export const sessionReply = z.object({
  sessionId: z.string(),
  accounts: z.array(sessionAccount),
  accountsUsed: z.number(),
  tokensIn: z.number(),
  cacheReadTokens: z.number(),
  cachedShare: z.number().nullable(),
  requests: z.array(logEntry),
  nextCursor: cursor,
});

const concentration = { hhi: z.number(), effectiveCount: z.number().nullable(), entropyBits: z.number(), evenness: z.number().nullable() };

export const diversityReply = z.object({
  by: z.enum(['provider', 'model', 'account']),
  metric: z.enum(['requests', 'tokens', 'cost']),
  bucket: z.enum(['minute', 'hour', 'day']),
  from: isoTime,
  to: isoTime,
  total: z.number(),
  unpricedRequests: z.number(),
  ...concentration,
  /** `key` and `label`: the node's prefix (`prefix/model` by model) or the connection's name; the stored id beside it. */
  groups: z.array(
    z.object({
      key: z.string().nullable(),
      label: z.string().nullable(),
      providerId: z.string().optional(),
      connectionId: z.string().optional(),
      requests: z.number(),
      tokens: z.number(),
      costUsd: z.number(),
      unpricedRequests: z.number(),
      share: z.number(),
    }) satisfies z.ZodType<DiversityGroup>,
  ),
  series: z.array(z.object({ t: isoTime, total: z.number(), shares: z.record(z.string(), z.number()), ...concentration }) satisfies z.ZodType<DiversityPoint>),
});

export const vacuumReply = z.object({ at: isoTime, durationMs: z.number(), bytesBefore: z.number(), bytesAfter: z.number() });

export const storageHealthReply = z.object({
  database: z.object({
    path: z.literal('router.db'),
    bytes: z.number(),
    walBytes: z.number(),
    pageSize: z.number(),
    pages: z.number(),
    freePages: z.number(),
    journalMode: z.string(),
  }),
  tables: z.array(z.object({ name: z.string(), rows: z.number() })),
  lastVacuum: vacuumReply.nullable(),
  lastBackup: backupReply.nullable(),
  backups: z.object({ count: z.number(), bytes: z.number() }),
  disk: z.object({ freeBytes: z.number(), totalBytes: z.number() }).nullable(),
}) satisfies z.ZodType<StorageHealth>;

export const cliToolChange = z.object({
  id: z.number(),
  at: isoTime,
  tool: z.string(),
  action: z.enum(['apply', 'undo']),
  files: z.array(z.object({ path: z.string(), action: z.enum(['created', 'modified', 'restored', 'removed']) })),
  backup: z.string().nullable(),
  keyId: z.string().nullable(),
  model: z.string().nullable(),
  baseUrl: z.string().nullable(),
}) satisfies z.ZodType<CliToolChange>;

export const cliToolLogsReply = z.object({ changes: z.array(cliToolChange), nextCursor: cursor });
