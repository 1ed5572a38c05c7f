import { z } from 'zod';
import { RouterError } from '../http/errors.js';
import { isoTime, NO_CONTENT } from '../http/replies.js';
import { route, json, noContent, type RouteDef } from '../http/routes.js';
import type { ApiKeyRecord, CreatedApiKey } from '../../shared/wire.js';
import { checkGrant } from './delegate.js';
import { checkKeyName } from './lookup.js';
import { DEFAULT_SCOPES, publicKey, SCOPE_RE, TOKEN_SCOPE_RE, type KeyLimits, type TokenLimit } from './store.js';

const name = z.string().trim().min(1).max(100);
const scopes = z.array(z.string().regex(SCOPE_RE, 'unknown scope (use proxy, manage, model:<pattern> or path:/<route prefix>)')).max(20);
const idParam = z.string().uuid();

/** Upper bounds that keep counters far below 2^53 while allowing any realistic budget. */
export const MAX_DAILY_REQUEST_LIMIT = 100_000_000;
export const MAX_TOKEN_LIMIT = 1_000_000_000_000;
export const MAX_TOKEN_LIMITS = 20;

/** Requests per UTC day: null = the default setting, 0 = unlimited. */
const dailyRequestLimit = z.number().int().min(0).max(MAX_DAILY_REQUEST_LIMIT).nullable();
/** One token limit of a key, as the routes accept and show it. */
export const tokenLimit = z
  .object({
    scope: z
      .string()
      .regex(TOKEN_SCOPE_RE, 'scope must be global, provider:<id> or model:<provider>/<model>') as z.ZodType<TokenLimit['scope']>,
    period: z.enum(['day', 'month']),
    /** 0 = no limit. */
    limit: z.number().int().min(0).max(MAX_TOKEN_LIMIT),
  })
  .strict();
/** A key's token limits as the routes (and sync) accept them. */
export const tokenLimits = z
  .array(tokenLimit)
  .max(MAX_TOKEN_LIMITS)
  .superRefine((list, ctx) => {
    const seen = new Set<string>();
    list.forEach((l, i) => {
      const id = `${l.scope} ${l.period}`;
      if (seen.has(id)) ctx.addIssue({ code: 'custom', path: [i, 'scope'], message: `duplicate token limit for ${l.scope} per ${l.period}` });
      seen.add(id);
    });
  });

/** Largest USD budget accepted: counted in nano-dollars, it stays far below 2^53. */
export const MAX_BUDGET_USD = 1_000_000;
/** A USD budget per UTC day or month; null removes it. */
export const budget = z
  .object({ period: z.enum(['day', 'month']), usd: z.number().positive().max(MAX_BUDGET_USD) })
  .strict()
  .nullable();

/** A key as the replies show it: masked, with its limits (the whole key only in the create reply). */
const keyReply = z.object({
  id: z.string(),
  name: z.string(),
  maskedKey: z.string(),
  scopes: z.array(z.string()),
  isActive: z.boolean(),
  createdAt: isoTime,
  lastUsedAt: isoTime.nullable(),
  dailyRequestLimit: z.number().nullable(),
  tokenLimits: z.array(tokenLimit),
  budget,
}) satisfies z.ZodType<ApiKeyRecord & KeyLimits>;
const createdKeyReply = keyReply.extend({ key: z.string() }) satisfies z.ZodType<CreatedApiKey & KeyLimits>;

/** Gives a name another key already has (refused with 409 `key_name_taken` otherwise). */
const allowDuplicateName = z.boolean().optional();
const createBody = z
  .object({ name, scopes: scopes.optional(), dailyRequestLimit: dailyRequestLimit.optional(), tokenLimits: tokenLimits.optional(), budget: budget.optional(), allowDuplicateName })
  .strict();
const patchBody = z
  .object({
    name: name.optional(),
    scopes: scopes.optional(),
    isActive: z.boolean().optional(),
    dailyRequestLimit: dailyRequestLimit.optional(),
    tokenLimits: tokenLimits.optional(),
    budget: budget.optional(),
    allowDuplicateName,
  })
  .strict()
  .refine((b) => Object.keys(b).some((k) => k !== 'allowDuplicateName'), 'at least one of name, scopes, isActive, dailyRequestLimit, tokenLimits, budget is required');

function keyId(params: Record<string, string>): string {
  const id = params.id ?? '';
  if (!idParam.safeParse(id).success) throw new RouterError(404, 'API key not found.');
  return id;
}

/** API keys: created shown once, stored hashed, listed masked. */
export const keyRoutes: RouteDef[] = [
  route({
    method: 'POST',
    path: '/api/keys',
    tier: 'management',
    tag: 'keys',
    summary: 'Create an API key (the whole key is in this reply only)',
    body: createBody,
    status: 201,
    reply: createdKeyReply,
    handler: async ({ services, body, auth }) => {
      checkGrant(auth, body.scopes ?? DEFAULT_SCOPES, 'create');
      checkKeyName(services.keys, body.name, body.allowDuplicateName);
      return json(201, await services.keys.create(body.name, body.scopes, { dailyRequestLimit: body.dailyRequestLimit, tokenLimits: body.tokenLimits, budget: body.budget }));
    },
  }),
  route({
    method: 'GET',
    path: '/api/keys',
    tier: 'management',
    tag: 'keys',
    summary: 'List API keys (masked)',
    reply: z.object({ keys: z.array(keyReply) }),
    handler: ({ services }) => ({ keys: services.keys.list().map(publicKey) }),
  }),
  route({
    method: 'GET',
    path: '/api/keys/:id',
    tier: 'management',
    tag: 'keys',
    summary: 'One API key (masked)',
    reply: keyReply,
    handler: ({ services, params }) => {
      const rec = services.keys.get(keyId(params));
      if (!rec) throw new RouterError(404, 'API key not found.');
      return publicKey(rec);
    },
  }),
  route({
    method: 'PATCH',
    path: '/api/keys/:id',
    tier: 'management',
    tag: 'keys',
    summary: 'Rename an API key and/or change its scopes, active flag and limits, applied together',
    body: patchBody,
    reply: keyReply,
    handler: async ({ services, params, body, auth }) => {
      const id = keyId(params);
      const current = services.keys.get(id);
      if (!current) throw new RouterError(404, 'API key not found.');
      checkGrant(auth, current.scopes, 'change');
      if (body.scopes) checkGrant(auth, body.scopes, 'change');
      if (body.name !== undefined) checkKeyName(services.keys, body.name, body.allowDuplicateName, id);
      const { allowDuplicateName: _allow, ...patch } = body;
      const rec = await services.keys.update(id, patch);
      if (!rec) throw new RouterError(404, 'API key not found.');
      return publicKey(rec);
    },
  }),
  route({
    method: 'DELETE',
    path: '/api/keys/:id',
    tier: 'management',
    tag: 'keys',
    summary: 'Delete an API key',
    status: 204,
    reply: NO_CONTENT,
    handler: async ({ services, params, auth }) => {
      const id = keyId(params);
      const current = services.keys.get(id);
      if (current) checkGrant(auth, current.scopes, 'change');
      if (!(await services.keys.remove(id))) throw new RouterError(404, 'API key not found.');
      return noContent();
    },
  }),
];
