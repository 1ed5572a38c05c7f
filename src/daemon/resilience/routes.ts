import { z } from 'zod';
import { RouterError } from '../http/errors.js';
import { isoTime, OK } from '../http/replies.js';
import { route, type RouteDef } from '../http/routes.js';
import { ANY_MODEL } from '../routing/cooldowns.js';
import { ACCOUNT_STRATEGIES, type AccountView, type CooldownView } from '../../shared/records.js';

const cooldownView = z.object({
  connectionId: z.string(),
  model: z.string(),
  until: z.number(),
  reason: z.string(),
  remainingSeconds: z.number(),
}) satisfies z.ZodType<CooldownView>;

const resilienceReply = z.object({
  breakers: z.array(
    z.object({
      provider: z.string(),
      providerId: z.string(),
      model: z.string().optional(),
      state: z.enum(['closed', 'open', 'half-open']),
      consecutiveFailures: z.number(),
      openUntil: isoTime.nullable(),
      since: z.number().optional(),
    }),
  ),
  cooldowns: z.array(cooldownView),
  /** Accounts tried after the healthy ones for a model (routing/account-health.ts). */
  demoted: z.array(z.object({ connectionId: z.string(), model: z.string(), failures: z.number(), remainingSeconds: z.number() })),
  settings: z.object({ failureThreshold: z.number(), cooldownMs: z.number(), halfOpenProbes: z.number() }),
});

const accountView = z.object({
  id: z.string(),
  provider: z.string(),
  providerId: z.string(),
  name: z.string(),
  authKind: z.string(),
  priority: z.number(),
  isActive: z.boolean(),
  headroom: z.number().nullable(),
  limitsUpdatedAt: isoTime.nullable(),
  windows: z.array(
    z.object({
      name: z.string(),
      limit: z.number().nullable(),
      remaining: z.number().nullable(),
      used: z.number().nullable(),
      resetAt: z.number().nullable(),
      left: z.number().nullable(),
      resetSeconds: z.number().nullable(),
    }),
  ),
  coolingUntil: isoTime.nullable(),
  cooldowns: z.array(z.object({ model: z.string(), remainingSeconds: z.number(), reason: z.string() })),
}) satisfies z.ZodType<AccountView>;

const resetBody = z.object({ provider: z.string().min(1).max(200).optional() }).strict();
const cooldownQuery = z.object({ connectionId: z.string().max(100).optional(), model: z.string().max(512).optional() }).strict();

/** Breaker and cooldown state, and the routes to clear them. */
export const resilienceRoutes: RouteDef[] = [
  route({
    method: 'GET',
    path: '/api/resilience',
    tier: 'management',
    tag: 'resilience',
    summary: 'Circuit breakers per provider (and per provider and model), active cooldowns, demoted accounts and breaker settings',
    reply: resilienceReply,
    handler: ({ services }) => {
      const r = services.resilience;
      // state() moves an open circuit whose cooldown has passed to half-open, so the list shows it as such.
      for (const b of r.breakers.snapshot()) r.breakers.state(b.provider, b.model);
      return {
        breakers: r.breakers.snapshot().map((b) => ({
          ...b,
          provider: services.providers.label(b.provider),
          providerId: b.provider,
          openUntil: b.state === 'open' ? new Date(b.openUntil).toISOString() : null,
        })),
        cooldowns: r.cooldowns.list(),
        // Accounts tried after the healthy ones for a model (repeated 5xx, model not available to them).
        demoted: r.health.list(),
        settings: r.breakers.settings,
      };
    },
  }),
  route({
    method: 'GET',
    path: '/api/accounts',
    tier: 'management',
    tag: 'resilience',
    summary:
      "Every account (connection) with its remaining quota as its replies' rate-limit headers report it (windows: limit, remaining, used share, reset; headroom = share left of the tightest window) and its cooldowns (account-wide and per model)",
    reply: z.object({ accountStrategy: z.enum(ACCOUNT_STRATEGIES), accounts: z.array(accountView) }),
    handler: ({ services }) => {
      const r = services.resilience;
      const limits = new Map(r.limits.list().map((l) => [l.connectionId, l]));
      const cooling = r.cooldowns.list();
      return {
        accountStrategy: services.settings.get().accountStrategy,
        accounts: services.connections.list().map((c): AccountView => {
          const own = cooling.filter((x) => x.connectionId === c.id);
          const all = own.find((x) => x.model === ANY_MODEL);
          const l = limits.get(c.id);
          return {
            id: c.id,
            provider: services.providers.label(c.provider),
            providerId: c.provider,
            name: c.name,
            authKind: c.authKind,
            priority: c.priority,
            isActive: c.isActive,
            headroom: l?.headroom ?? null,
            limitsUpdatedAt: l?.updatedAt ?? null,
            windows: l?.windows ?? [],
            // Cooling for every model (a usage limit reached, out of credit, auth) until then, if it is.
            coolingUntil: all ? new Date(all.until).toISOString() : null,
            cooldowns: own.map((x) => ({ model: x.model, remainingSeconds: x.remainingSeconds, reason: x.reason })),
          };
        }),
      };
    },
  }),
  route({
    method: 'GET',
    path: '/api/resilience/model-cooldowns',
    tier: 'management',
    tag: 'resilience',
    summary: 'Active cooldowns per (connection, model)',
    reply: z.object({ cooldowns: z.array(cooldownView) }),
    handler: ({ services }) => ({ cooldowns: services.resilience.cooldowns.list() }),
  }),
  route({
    method: 'DELETE',
    path: '/api/resilience/model-cooldowns',
    tier: 'management',
    tag: 'resilience',
    summary: 'Clear cooldowns: all, one connection (?connectionId) or one connection and model',
    query: cooldownQuery,
    reply: z.object({ cleared: z.number() }),
    handler: ({ services, query }) => {
      const c = services.resilience.cooldowns;
      const before = c.list().length;
      for (const e of c.list()) {
        if (query.connectionId && e.connectionId !== query.connectionId) continue;
        if (query.model && e.model !== query.model) continue;
        c.clear(e.connectionId, e.model);
      }
      services.resilience.touch();
      return { cleared: before - c.list().length };
    },
  }),
  route({
    method: 'POST',
    path: '/api/resilience/reset',
    tier: 'management',
    tag: 'resilience',
    summary:
      "Close a provider's circuit breakers, its models' included, and end its accounts' demotions (or every one when no provider is given); the provider by id, alias or node prefix; answers how many circuits were not closed",
    body: resetBody,
    reply: OK.extend({ provider: z.string().nullable(), closed: z.number() }),
    handler: ({ services, body }) => {
      const breakers = services.resilience.breakers;
      let id: string | undefined;
      if (body.provider !== undefined) {
        // A deleted node's leftover circuits are keyed by its id, which still names them.
        id = services.providers.provider(body.provider)?.id ?? breakers.snapshot().find((b) => b.provider === body.provider)?.provider;
        if (id === undefined) {
          throw new RouterError(404, `Unknown provider '${body.provider}'.`, { code: 'provider_not_found', extra: { param: 'provider' } });
        }
      }
      for (const b of breakers.snapshot()) breakers.state(b.provider, b.model);
      const closed = breakers.snapshot().filter((b) => (id === undefined || b.provider === id) && b.state !== 'closed').length;
      breakers.reset(id);
      const ids = id === undefined ? undefined : services.connections.list().filter((c) => c.provider === id).map((c) => c.id);
      services.resilience.health.clear(ids);
      services.resilience.touch();
      return { ok: true, provider: id === undefined ? null : services.providers.label(id), closed };
    },
  }),
];
