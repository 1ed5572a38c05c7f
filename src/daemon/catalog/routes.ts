import { z } from 'zod';
import { route, type RouteDef } from '../http/routes.js';
import type { Services } from '../services.js';
import type { Price } from '../usage/pricing.js';
import { entryOf, type CatalogEntry, type CatalogPrices } from './catalog.js';
import type { CatalogReply, CatalogUpdateResult } from '../../shared/catalog.js';

const nullableNumber = z.number().nullable();
const catalogReply = z.object({
  version: z.string(),
  source: z.string(),
  models: z.array(
    z.object({
      id: z.string(),
      provider: z.string(),
      name: z.string(),
      contextWindow: nullableNumber,
      maxOutputTokens: nullableNumber,
      inputModalities: z.array(z.string()),
      outputModalities: z.array(z.string()),
      toolCall: z.boolean(),
      reasoning: z.boolean(),
      prices: z
        .object({
          input: z.number(),
          output: z.number(),
          cacheRead: nullableNumber,
          cacheWrite: nullableNumber,
          reasoning: nullableNumber,
          inputAudio: nullableNumber,
          outputAudio: nullableNumber,
        })
        .nullable(),
      source: z.enum(['catalog', 'override', 'provider']),
    }),
  ),
}) satisfies z.ZodType<CatalogReply>;
const updateReply = z.object({
  updated: z.boolean(),
  version: z.string(),
  previousVersion: z.string(),
  providers: z.number(),
  models: z.number(),
  reason: z.string().optional(),
}) satisfies z.ZodType<CatalogUpdateResult>;

const catalogQuery = z
  .object({
    /** Only this provider's models (router's id, e.g. `gemini`). */
    provider: z.string().trim().min(1).max(100).optional(),
    /** Only models whose id or name contains this text (case-insensitive). */
    search: z.string().trim().min(1).max(200).optional(),
  })
  .strict();

/**
 * The catalog as listed: every catalog model (its prices replaced by the user's where an override exists,
 * `source: override`), then the models router's providers list that the catalog lacks (`source: provider`,
 * priced by router's table when it has them).
 */
export function catalogEntries(services: Pick<Services, 'catalog' | 'usage' | 'providers'>): CatalogEntry[] {
  const catalog = services.catalog.get();
  const pricing = services.usage.pricing;
  const out: CatalogEntry[] = [];
  const seen = new Set<string>();
  for (const provider of catalog.providerIds()) {
    for (const m of catalog.provider(provider)!.models) {
      const entry = entryOf(provider, m);
      const override = pricing.override(provider, m[0]);
      if (override) Object.assign(entry, { prices: pricesFrom(override), source: 'override' });
      seen.add(entry.id);
      out.push(entry);
    }
  }
  for (const def of services.providers.all()) {
    if (def.kind === 'web-session') continue;
    const provider = services.providers.publicId(def);
    for (const m of services.providers.models(def)) {
      const id = `${provider}/${m.id}`;
      if (seen.has(id) || catalog.model(def.id, m.id)) continue;
      seen.add(id);
      const price = pricing.entry(def.id, m.id);
      out.push({
        id,
        provider,
        name: m.id,
        contextWindow: m.contextLength ?? null,
        maxOutputTokens: m.maxOutputTokens ?? null,
        inputModalities: [],
        outputModalities: [],
        toolCall: def.supportsTools !== false,
        reasoning: m.reasoning === true,
        prices: price ? pricesFrom(price) : null,
        source: price?.source === 'override' ? 'override' : 'provider',
      });
    }
  }
  return out;
}

function pricesFrom(p: Pick<Price, 'input' | 'output' | 'audioInput' | 'audioOutput'> & { cacheRead?: number | null; cacheWrite?: number | null; reasoning?: number | null }): CatalogPrices {
  return {
    input: p.input,
    output: p.output,
    cacheRead: p.cacheRead ?? null,
    cacheWrite: p.cacheWrite ?? null,
    reasoning: p.reasoning ?? null,
    inputAudio: p.audioInput ?? null,
    outputAudio: p.audioOutput ?? null,
  };
}

/** The model catalog (docs/catalog.md). */
export const catalogRoutes: RouteDef[] = [
  route({
    method: 'GET',
    path: '/api/catalog/models',
    tier: 'management',
    tag: 'catalog',
    summary:
      'The model catalog (models.dev data): context window, max output, modalities, tool calls, reasoning and prices per model; user price overrides shown in place (source override); filters provider, search',
    query: catalogQuery,
    reply: catalogReply,
    handler: ({ services, query }) => {
      let models = catalogEntries(services);
      if (query.provider) models = models.filter((m) => m.provider === query.provider);
      if (query.search) {
        const s = query.search.toLowerCase();
        models = models.filter((m) => m.id.toLowerCase().includes(s) || m.name.toLowerCase().includes(s));
      }
      const catalog = services.catalog.get();
      return { version: catalog.version, source: catalog.source, models };
    },
  }),
  route({
    method: 'POST',
    path: '/api/catalog/update',
    tier: 'management',
    tag: 'catalog',
    summary:
      "Fetch the catalog from the setting catalogUrl (models.dev's api.json by default) and use it from now on; when it cannot be fetched or read, says why and keeps the current one (updated: false)",
    reply: updateReply,
    handler: ({ services }) => services.catalog.update(services.settings.get().catalogUrl),
  }),
];
