import { z } from 'zod';
import { badRequest, RouterError } from '../http/errors.js';
import { json, route, type RouteDef } from '../http/routes.js';
import type { Services } from '../services.js';
import { MAX_POINTS, pointCount, type Range } from '../usage/queries.js';
import { ident, ordered, orderedMsg, time } from '../usage/routes.js';
import { keyIdFor } from '../keys/lookup.js';
import { decodeCursor } from './sessions.js';
import { cliToolChange, cliToolLogsReply, diversityReply, sessionReply, sessionsReply, storageHealthReply, translatorHistoryReply, vacuumReply } from './replies.js';
import { storageHealth, vacuum } from './storage.js';

const idCursor = z.string().regex(/^[1-9]\d{0,15}$/, 'expected the nextCursor of a previous page');
const FORMATS = ['openai-chat', 'openai-responses', 'anthropic', 'gemini', 'openai-completions'] as const;

const historyQuery = z
  .object({
    limit: z.coerce.number().int().min(1).max(200).default(20),
    cursor: idCursor.optional(),
    clientFormat: z.enum(FORMATS).optional(),
    upstreamFormat: z.enum(FORMATS).optional(),
    traceId: ident.optional(),
    translated: z.enum(['true', 'false']).optional(),
  })
  .strict();

const sessionsQuery = z
  .object({
    from: time.optional(),
    to: time.optional(),
    provider: ident.optional(),
    model: ident.optional(),
    key: ident.optional(),
    q: z.string().trim().min(1).max(256).optional(),
    limit: z.coerce.number().int().min(1).max(200).default(50),
    perSession: z.coerce.number().int().min(0).max(100).default(10),
    cursor: z.string().max(1200).optional(),
  })
  .strict()
  .refine(ordered, orderedMsg);

const sessionQuery = z.object({ limit: z.coerce.number().int().min(1).max(500).default(100), cursor: idCursor.optional() }).strict();

const diversityQuery = z
  .object({
    by: z.enum(['provider', 'model', 'account']).default('provider'),
    metric: z.enum(['requests', 'tokens', 'cost']).default('requests'),
    bucket: z.enum(['minute', 'hour', 'day']).default('hour'),
    from: time.optional(),
    to: time.optional(),
  })
  .strict()
  .refine(ordered, orderedMsg);

/**
 * How each diversity group is shown: provider nodes by prefix (`prefix/model` by model), connections by
 * name (with the start of the id when two groups share a name, so no two groups merge); ids beside them.
 */
function diversityNames(services: Services, by: 'provider' | 'model' | 'account', keys: Array<string | null>) {
  const out = new Map<string, { label: string; ids: { providerId?: string; connectionId?: string } }>();
  for (const key of keys) {
    if (key === null) continue;
    if (by === 'provider') out.set(key, { label: services.providers.label(key), ids: { providerId: key } });
    else if (by === 'model') {
      const slash = key.indexOf('/');
      const providerId = key.slice(0, slash);
      out.set(key, { label: `${services.providers.label(providerId)}${key.slice(slash)}`, ids: { providerId } });
    } else out.set(key, { label: services.connections.get(key)?.name ?? key, ids: { connectionId: key } });
  }
  const seen = new Map<string, number>();
  for (const v of out.values()) seen.set(v.label, (seen.get(v.label) ?? 0) + 1);
  for (const [key, v] of out) if ((seen.get(v.label) ?? 0) > 1) v.label = `${v.label} (${key.slice(0, 8)})`;
  return out;
}

const cliLogsQuery = z
  .object({
    tool: z.string().regex(/^[a-z0-9-]{1,40}$/, 'expected a tool id such as claude-code').optional(),
    limit: z.coerce.number().int().min(1).max(500).default(50),
    cursor: idCursor.optional(),
  })
  .strict();

const filePath = z.string().min(1).max(4096).refine((p) => !/[\u0000\r\n]/.test(p), 'no control characters');
const cliChangeBody = z
  .object({
    tool: z.string().regex(/^[a-z0-9-]{1,40}$/, 'expected a tool id such as claude-code'),
    action: z.enum(['apply', 'undo']),
    files: z.array(z.object({ path: filePath, action: z.enum(['created', 'modified', 'restored', 'removed']) }).strict()).max(50),
    backup: filePath.nullish(),
    keyId: z.string().max(100).nullish(),
    model: z.string().max(200).nullish(),
    baseUrl: z.string().max(2048).nullish(),
  })
  .strict();

const DEFAULT_SPAN = { minute: 3_600_000, hour: 86_400_000, day: 30 * 86_400_000 } as const;

/** The request-log based routes read what the proxy recorded so far (queued rows written first). */
const fresh = (services: Services) => services.usage.flush();

/** The observability routes the dashboard shows (management tier; docs/observability.md). */
export const insightRoutes: RouteDef[] = [
  route({
    method: 'GET',
    path: '/api/translator/history',
    tier: 'management',
    tag: 'observability',
    summary:
      'The last translations (setting translatorHistorySize, recorded while captureTraffic is on): client and upstream formats, the request and reply in both shapes (credentials masked), dropped fields; newest first',
    query: historyQuery,
    reply: translatorHistoryReply,
    handler: ({ services, query }) => {
      const settings = services.settings.get();
      const page = services.translatorHistory.list({
        limit: query.limit,
        before: query.cursor === undefined ? undefined : Number(query.cursor),
        clientFormat: query.clientFormat,
        upstreamFormat: query.upstreamFormat,
        traceId: query.traceId,
        translated: query.translated === undefined ? undefined : query.translated === 'true',
      });
      return { recording: settings.captureTraffic && settings.translatorHistorySize > 0, size: settings.translatorHistorySize, ...page };
    },
  }),
  route({
    method: 'GET',
    path: '/api/sessions',
    tier: 'management',
    tag: 'observability',
    summary:
      'Conversations grouped by session id (X-Router-Session), most recently active first, with totals and their latest requests; filters from, to, provider, model, key, q (id contains); paged by cursor',
    query: sessionsQuery,
    reply: sessionsReply,
    handler: async ({ services, query }) => {
      const after = query.cursor === undefined ? undefined : decodeCursor(query.cursor);
      if (query.cursor !== undefined && !after) throw badRequest("Invalid query parameter 'cursor': expected the nextCursor of a previous page.", 'cursor');
      await fresh(services);
      const page = await services.usage.repo.sessions(
        { from: query.from, to: query.to, provider: query.provider && services.providers.idFor(query.provider), model: query.model, key: query.key && keyIdFor(services.keys, query.key), q: query.q },
        { limit: query.limit, after, perSession: query.perSession },
      );
      for (const s of page.sessions) {
        s.providers = s.providers.map((id) => services.providers.label(id));
        for (const entry of s.recent) entry.provider = services.providers.label(entry.providerId);
      }
      return page;
    },
  }),
  route({
    method: 'GET',
    path: '/api/sessions/:id',
    tier: 'management',
    tag: 'observability',
    summary:
      "Every request of one session, oldest first, paged by cursor; with the accounts it used and the cached share of its input tokens (cacheReadTokens / tokensIn of its served requests)",
    query: sessionQuery,
    reply: sessionReply,
    handler: async ({ services, params, query }) => {
      const id = params.id ?? '';
      await fresh(services);
      const page = await services.usage.repo.sessionRequests(id, { limit: query.limit, after: query.cursor === undefined ? undefined : Number(query.cursor) });
      if (page.requests.length === 0 && query.cursor === undefined) throw new RouterError(404, `No request carried the session '${id.slice(0, 200)}'.`);
      for (const entry of page.requests) entry.provider = services.providers.label(entry.providerId);
      const facts = await services.usage.repo.sessionCacheFacts(id);
      for (const a of facts.accounts) {
        a.provider = services.providers.label(a.providerId);
        a.name = a.connectionId === null ? null : (services.connections.get(a.connectionId)?.name ?? null);
      }
      return { sessionId: id, ...facts, ...page };
    },
  }),
  route({
    method: 'GET',
    path: '/api/analytics/diversity',
    tier: 'management',
    tag: 'observability',
    summary:
      'How traffic spread over providers, models or accounts in a period: shares of requests, tokens or cost, concentration (Herfindahl-Hirschman index, Shannon entropy, evenness) overall and per time bucket',
    query: diversityQuery,
    reply: diversityReply,
    handler: async ({ services, query }) => {
      const to = query.to ?? Date.now() + 1;
      const r: Range = { from: query.from ?? to - DEFAULT_SPAN[query.bucket], to };
      if (pointCount(query.bucket, r) > MAX_POINTS) {
        throw badRequest(`The range holds more than ${MAX_POINTS} ${query.bucket} buckets; narrow it or use a larger bucket.`, 'bucket');
      }
      await fresh(services);
      const result = await services.usage.repo.diversity(query.by, query.metric, query.bucket, r);
      const names = diversityNames(services, query.by, result.groups.map((g) => g.key));
      const shown = (key: string | null) => (key === null ? null : (names.get(key)?.label ?? key));
      return {
        by: query.by,
        metric: query.metric,
        bucket: query.bucket,
        from: new Date(r.from).toISOString(),
        to: new Date(r.to).toISOString(),
        ...result,
        // Groups and the series' shares are keyed by what people read (a node's prefix, a connection's
        // name); the stored id stays beside it (providerId, connectionId).
        groups: result.groups.map((g) => ({ ...g, key: shown(g.key), label: shown(g.key), ...(g.key === null ? {} : names.get(g.key)?.ids) })),
        series: result.series.map((p) => ({ ...p, shares: Object.fromEntries(Object.entries(p.shares).map(([k, v]) => [shown(k || null) ?? '', v])) })),
      };
    },
  }),
  route({
    method: 'GET',
    path: '/api/storage/health',
    tier: 'management',
    tag: 'observability',
    summary: 'Database and WAL size, pages and free pages, row counts per table, last vacuum and backup, free disk space',
    reply: storageHealthReply,
    handler: async ({ services }) => {
      await fresh(services);
      return storageHealth(services.db, services.paths.db, services.backups.list());
    },
  }),
  route({
    method: 'POST',
    path: '/api/storage/vacuum',
    tier: 'management',
    tag: 'observability',
    summary: 'Rewrite the database without its free pages (SQLite VACUUM; blocks the daemon while it runs) and truncate the WAL',
    reply: vacuumReply,
    handler: async ({ services }) => {
      await fresh(services);
      return vacuum(services.db, services.paths.db);
    },
  }),
  route({
    method: 'GET',
    path: '/api/cli-tools/logs',
    tier: 'local',
    tag: 'observability',
    summary: 'What `router config-tool` changed in coding agents\' settings and when (tool, files, action, backup), newest first; paged by cursor',
    query: cliLogsQuery,
    reply: cliToolLogsReply,
    handler: async ({ services, query }) => services.cliToolLog.list({ tool: query.tool, limit: query.limit, before: query.cursor === undefined ? undefined : Number(query.cursor) }),
  }),
  route({
    method: 'POST',
    path: '/api/cli-tools/logs',
    tier: 'local',
    tag: 'observability',
    summary: 'Record a change `router config-tool` made (the CLI calls this after writing or restoring a tool\'s settings)',
    status: 201,
    body: cliChangeBody,
    reply: cliToolChange,
    handler: async ({ services, body }) => json(201, await services.cliToolLog.record(body)),
  }),
];
