import { z } from 'zod';
import { badRequest, RouterError } from '../http/errors.js';
import { route, type RouteDef } from '../http/routes.js';
import { keyIdFor } from '../keys/lookup.js';
import { entryNames } from './names.js';
import type { Services } from '../services.js';
import type { GroupLabel } from '../../shared/records.js';
import { processStats } from './process-stats.js';
import { breakdownReply, logsReply, priceDeletedReply, priceEntry, pricingReply, summaryReply, telemetryReply, timeseriesReply } from './replies.js';
import type { Price } from './pricing.js';
import { MAX_POINTS, pointCount, type Range, type StatusFilter } from './queries.js';

const MAX_MS = 8.64e15;

/** Parses `from`/`to`: unix milliseconds or an ISO 8601 date or date-time. */
export function parseTime(s: string): number | undefined {
  if (/^\d{1,16}$/.test(s)) {
    const n = Number(s);
    return n <= MAX_MS ? n : undefined;
  }
  if (!/^\d{4}-\d{2}-\d{2}([Tt ][\d:.]+([Zz]|[+-]\d{2}:?\d{2})?)?$/.test(s)) return undefined;
  const n = Date.parse(s);
  return Number.isFinite(n) ? n : undefined;
}

/** A query time: unix milliseconds or an ISO 8601 date-time (shared by the analytics and insights routes). */
export const time = z
  .string()
  .trim()
  .max(40)
  .transform((s, ctx) => {
    const n = parseTime(s);
    if (n === undefined) {
      ctx.addIssue({ code: 'custom', message: 'expected unix milliseconds or an ISO 8601 date-time' });
      return z.NEVER;
    }
    return n;
  });

export const ident = z.string().trim().min(1).max(200);
/** Most series one grouped timeseries reply may hold (`top`). */
const MAX_SERIES = 20;
const rangeFields = { from: time.optional(), to: time.optional() };
/** A range whose `from` is not after its `to` (with its message, for `.refine`). */
export const ordered = (q: { from?: number; to?: number }) => q.from === undefined || q.to === undefined || q.from <= q.to;
export const orderedMsg = { message: "'from' must not be after 'to'", path: ['from'] };

const rangeQuery = z.object(rangeFields).strict().refine(ordered, orderedMsg);
const breakdownQuery = z
  .object({ by: z.enum(['provider', 'model', 'key', 'connection', 'endpoint', 'combo']), ...rangeFields })
  .strict()
  .refine(ordered, orderedMsg);
const timeseriesQuery = z
  .object({
    bucket: z.enum(['minute', 'hour', 'day']).default('hour'),
    ...rangeFields,
    provider: ident.optional(),
    model: ident.optional(),
    /** An API key's id or name. */
    key: ident.optional(),
    /** A combo name. */
    combo: ident.optional(),
    /** Adds one series per provider, model, key or combo of the filtered rows (the `top` largest by cost, default 8). */
    groupBy: z.enum(['provider', 'model', 'key', 'combo']).optional(),
    top: z.coerce.number().int().min(1).max(MAX_SERIES).optional(),
  })
  .strict()
  .refine(ordered, orderedMsg)
  .refine((q) => q.top === undefined || q.groupBy !== undefined, { message: "'top' needs 'groupBy'", path: ['top'] });

const statusParam = z
  .string()
  .trim()
  .transform((s, ctx): StatusFilter => {
    const lower = s.toLowerCase();
    if (/^[1-5]\d\d$/.test(s)) return { exact: Number(s) };
    if (/^[1-5]xx$/.test(lower)) return { min: Number(lower[0]) * 100, max: Number(lower[0]) * 100 + 99 };
    if (lower === 'error') return { min: 400, max: 599 };
    if (lower === 'success') return { min: 100, max: 399 };
    ctx.addIssue({ code: 'custom', message: 'expected an HTTP status (e.g. 429), a class (2xx, 4xx, 5xx), error or success' });
    return z.NEVER;
  });

const logsQuery = z
  .object({
    provider: ident.optional(),
    model: ident.optional(),
    status: statusParam.optional(),
    key: ident.optional(),
    ...rangeFields,
    limit: z.coerce.number().int().min(1).max(500).default(50),
    cursor: z.string().regex(/^[1-9]\d{0,15}$/, 'expected the nextCursor of a previous page').optional(),
  })
  .strict()
  .refine(ordered, orderedMsg);

const telemetryQuery = z.object({ minutes: z.coerce.number().int().min(1).max(1440).default(60) }).strict();

/** Where the request log's names come from. */
export const nameSources = (services: Services) => ({ label: (id: string) => services.providers.label(id), keys: services.keys, connections: services.connections });

/** Breakdown rows and series as people read them: provider nodes by prefix, connections and keys with their names. */
function labelRows<T extends GroupLabel>(services: Services, by: string, rows: T[]): T[] {
  if (by === 'provider') {
    for (const row of rows) if (row.key !== null) [row.providerId, row.key] = [row.key, services.providers.label(row.key)];
  } else if (by === 'model') {
    for (const row of rows) {
      const slash = row.key?.indexOf('/') ?? -1;
      if (row.key === null || slash < 0) continue;
      row.providerId = row.key.slice(0, slash);
      row.key = `${services.providers.label(row.providerId)}${row.key.slice(slash)}`;
    }
  } else if (by === 'connection') {
    for (const row of rows) row.name = row.key === null ? null : (services.connections.get(row.key)?.name ?? null);
  } else if (by === 'key') {
    for (const row of rows) row.name = row.key === null ? null : (services.keys.get(row.key)?.name ?? null);
  }
  return rows;
}

/**
 * Reads are consistent with what the proxy has recorded so far: queued rows are written first, and the
 * writer worker has committed everything handed to it (read-your-writes).
 */
async function fresh(services: Services): Promise<void> {
  await services.usage.flush();
}

function range(q: { from?: number; to?: number }, defaultSpanMs?: number): Range {
  const to = q.to ?? Date.now() + 1;
  const from = q.from ?? (defaultSpanMs === undefined ? 0 : to - defaultSpanMs);
  return { from, to };
}

const DEFAULT_SPAN = { minute: 3_600_000, hour: 86_400_000, day: 30 * 86_400_000 } as const;

const PROVIDER_RE = /^[A-Za-z0-9._-]{1,100}$/;
// eslint-disable-next-line no-control-regex
const CONTROL_RE = /[\u0000-\u001f\u007f]/;
const rate = z.number().finite().min(0).max(100_000);
/** `perImage`: one price, or prices by `quality/size` (`*` matches any: `hd/*`, `*\/1024x1024`, `*\/*`). */
const perImage = z.union([
  rate,
  z
    .record(z.string().regex(/^[A-Za-z0-9*]{1,20}\/[A-Za-z0-9*]{1,20}$/, "keys are 'quality/size', '*' matching any"), rate)
    .refine((r) => Object.keys(r).length >= 1 && Object.keys(r).length <= 50, 'between 1 and 50 quality/size prices'),
]);
const priceBody = z
  .object({
    input: rate,
    output: rate,
    cacheRead: rate.nullish(),
    cacheWrite: rate.nullish(),
    reasoning: rate.nullish(),
    // Unit rates of media and rerank models (usage/pricing.ts UnitRates).
    imageInput: rate.nullish(),
    imageOutput: rate.nullish(),
    audioInput: rate.nullish(),
    audioOutput: rate.nullish(),
    perImage: perImage.nullish(),
    perAudioMinute: rate.nullish(),
    minAudioSeconds: rate.nullish(),
    perMillionCharacters: rate.nullish(),
    perSearchUnit: rate.nullish(),
  })
  .strict();
const pricingQuery = z.object({ provider: ident.optional() }).strict();

/**
 * The provider and model a pricing route names. A provider node's prefix is stored as the node's id, the
 * id its usage rows carry, so a price set for `mynode/model` applies to that node's requests.
 */
function priceParams(services: Services, params: Record<string, string>): { provider: string; model: string } {
  const provider = params.provider ?? '';
  let model: string;
  try {
    model = decodeURIComponent(params.model ?? '');
  } catch {
    throw badRequest("Invalid path parameter 'model': malformed percent-encoding.", 'model');
  }
  if (!PROVIDER_RE.test(provider)) throw badRequest("Invalid path parameter 'provider': letters, digits, '.', '_' and '-' only.", 'provider');
  if (model === '' || model.length > 200 || CONTROL_RE.test(model)) throw badRequest("Invalid path parameter 'model'.", 'model');
  return { provider: services.providers.idFor(provider), model };
}

/** An entry as people read it: a node's prefix instead of its id. */
function labelled<T extends { provider: string }>(services: Services, entry: T): T {
  return { ...entry, provider: services.providers.label(entry.provider) };
}

/** Usage analytics, the request log, telemetry and the price table (management tier). */
export const usageRoutes: RouteDef[] = [
  route({
    method: 'GET',
    path: '/api/usage/summary',
    tier: 'management',
    tag: 'usage',
    summary: 'Usage totals over a time range: requests (attempts), errors, tokens by kind, cost',
    query: rangeQuery,
    reply: summaryReply,
    handler: async ({ services, query }) => {
      await fresh(services);
      return services.usage.repo.summary(range(query));
    },
  }),
  route({
    method: 'GET',
    path: '/api/usage/breakdown',
    tier: 'management',
    tag: 'usage',
    summary: 'Usage totals grouped by provider, model, key, connection, endpoint or combo',
    query: breakdownQuery,
    reply: breakdownReply,
    handler: async ({ services, query }) => {
      await fresh(services);
      const r = range(query);
      return { by: query.by, from: new Date(r.from).toISOString(), to: new Date(r.to).toISOString(), rows: labelRows(services, query.by, await services.usage.repo.breakdown(query.by, r)) };
    },
  }),
  route({
    method: 'GET',
    path: '/api/usage/timeseries',
    tier: 'management',
    tag: 'usage',
    summary:
      'Requests, errors, tokens and cost per minute, hour or day (UTC buckets, zero-filled); filters provider, model, key, combo; groupBy adds one series per provider, model, key or combo',
    query: timeseriesQuery,
    reply: timeseriesReply,
    handler: async ({ services, query }) => {
      const r = range(query, DEFAULT_SPAN[query.bucket]);
      if (pointCount(query.bucket, r) > MAX_POINTS) {
        throw badRequest(`The range holds more than ${MAX_POINTS} ${query.bucket} buckets; narrow it or use a larger bucket.`, 'bucket');
      }
      await fresh(services);
      const filter = { provider: query.provider && services.providers.idFor(query.provider), model: query.model, key: query.key && keyIdFor(services.keys, query.key), combo: query.combo };
      const reply = {
        bucket: query.bucket,
        from: new Date(r.from).toISOString(),
        to: new Date(r.to).toISOString(),
        points: await services.usage.repo.timeseries(query.bucket, r, filter),
      };
      if (!query.groupBy) return reply;
      const grouped = await services.usage.repo.groupedTimeseries(query.bucket, r, filter, query.groupBy, query.top ?? 8);
      return { ...reply, groupBy: query.groupBy, series: labelRows(services, query.groupBy, grouped.series), otherGroups: grouped.otherGroups };
    },
  }),
  route({
    method: 'GET',
    path: '/api/logs',
    tier: 'management',
    tag: 'usage',
    summary: 'Request log, newest first; filters provider, model, status, key (id or name), from, to; paged by cursor',
    query: logsQuery,
    reply: logsReply,
    handler: async ({ services, query }) => {
      await fresh(services);
      const page = await services.usage.repo.logs({
        provider: query.provider && services.providers.idFor(query.provider),
        model: query.model,
        status: query.status,
        key: query.key && keyIdFor(services.keys, query.key),
        from: query.from,
        to: query.to,
        limit: query.limit,
        before: query.cursor === undefined ? undefined : Number(query.cursor),
      });
      for (const entry of page.logs) Object.assign(entry, entryNames(nameSources(services), entry));
      return page;
    },
  }),
  route({
    method: 'GET',
    path: '/api/telemetry/summary',
    tier: 'management',
    tag: 'usage',
    summary: 'Latency p50/p95/p99 and error rate per provider over the last `minutes` (default 60), the usage recorder, and the daemon process (memory, descriptors, event-loop delay)',
    query: telemetryQuery,
    reply: telemetryReply,
    handler: async ({ services, query }) => {
      await fresh(services);
      const to = Date.now();
      const from = to - query.minutes * 60_000;
      const stats = services.usage.stats();
      return {
        window: { from: new Date(from).toISOString(), to: new Date(to).toISOString(), minutes: query.minutes },
        providers: (await services.usage.repo.telemetry(from)).map((t) => ({ ...t, provider: services.providers.label(t.providerId) })),
        recorder: { requestsPerSecond: services.usage.requestsPerSecond(), inFlight: services.usage.inflight.count, ...stats },
        process: processStats(),
      };
    },
  }),
  route({
    method: 'GET',
    path: '/api/pricing',
    tier: 'management',
    tag: 'pricing',
    summary: 'The effective price table (USD per million tokens): shipped defaults and user overrides',
    query: pricingQuery,
    reply: pricingReply,
    handler: ({ services, query }) => ({
      pricing: services.usage.pricing.list(query.provider && services.providers.idFor(query.provider)).map((e) => labelled(services, e)),
    }),
  }),
  route({
    method: 'GET',
    path: '/api/pricing/:provider/**:model',
    tier: 'management',
    tag: 'pricing',
    summary: "One provider model's effective price (the model id may contain slashes)",
    reply: priceEntry,
    handler: ({ services, params }) => {
      const { provider, model } = priceParams(services, params);
      const entry = services.usage.pricing.entry(provider, model);
      if (!entry) throw new RouterError(404, `No price is known for ${params.provider}/${model}.`);
      return labelled(services, entry);
    },
  }),
  route({
    method: 'PUT',
    path: '/api/pricing/:provider/**:model',
    tier: 'management',
    tag: 'pricing',
    summary:
      "Set a provider model's price (USD per million tokens; absent cache rates bill as input, reasoning as output; media and rerank unit rates: perImage, perAudioMinute, perMillionCharacters, perSearchUnit...)",
    body: priceBody,
    reply: priceEntry,
    handler: async ({ services, params, body }) => {
      const { provider, model } = priceParams(services, params);
      // Null and absent fields are left out: the price is replaced whole (docs/usage.md).
      const price = Object.fromEntries(Object.entries(body).filter(([, v]) => v !== null && v !== undefined)) as unknown as Price;
      return labelled(services, await services.usage.pricing.set(provider, model, price));
    },
  }),
  route({
    method: 'DELETE',
    path: '/api/pricing/:provider/**:model',
    tier: 'management',
    tag: 'pricing',
    summary: "Remove the user's price for a model, restoring the shipped default (if any)",
    reply: priceDeletedReply,
    handler: async ({ services, params }) => {
      const { provider, model } = priceParams(services, params);
      if (!(await services.usage.pricing.reset(provider, model))) throw new RouterError(404, `No price override exists for ${params.provider}/${model}.`);
      const restored = services.usage.pricing.entry(provider, model);
      return { deleted: true, pricing: restored ? labelled(services, restored) : null };
    },
  }),
];
