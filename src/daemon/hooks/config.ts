import { z } from 'zod';

/** Most hooks a daemon holds, and most actions one hook carries. */
export const MAX_HOOKS = 100;
export const MAX_ACTIONS = 20;
/** Bytes of one hook's JSON definition at most. */
export const MAX_HOOK_BYTES = 16 * 1024;

/**
 * Upstream request headers no hook may set or remove: the credential headers (a hook never sees or replaces
 * a secret) and the ones that frame the HTTP message.
 */
const PROTECTED_REQUEST_HEADERS = new Set([
  'authorization',
  'proxy-authorization',
  'x-api-key',
  'x-goog-api-key',
  'api-key',
  'cookie',
  'host',
  'content-length',
  'content-type',
  'transfer-encoding',
  'connection',
  'accept-encoding',
]);
/** Reply headers no hook may add: framing, cookies, and router's own. */
const PROTECTED_REPLY_HEADERS = new Set(['content-length', 'content-type', 'transfer-encoding', 'connection', 'set-cookie', 'cache-control']);
/** Body fields no hook may drop or set: the model has its own action; the stream flag decides the reply's shape. */
const PROTECTED_FIELDS = new Set(['model', 'stream', '__proto__', 'constructor', 'prototype']);

const headerName = z
  .string()
  .min(1)
  .max(100)
  .regex(/^[A-Za-z0-9!#$%&'*+.^_`|~-]+$/, 'expected an HTTP header name')
  .transform((s) => s.toLowerCase());
const headerValue = z
  .string()
  .max(4096)
  .regex(/^[\t\x20-\x7e\x80-\xff]*$/, 'header values may not contain control characters');
const requestHeader = headerName.refine((n) => !PROTECTED_REQUEST_HEADERS.has(n) && !n.startsWith('x-router-'), {
  message: 'this header may not be changed by a hook (credentials and message framing are protected)',
});
const replyHeader = headerName.refine((n) => !PROTECTED_REPLY_HEADERS.has(n) && !n.startsWith('x-router-'), {
  message: 'this reply header may not be set by a hook',
});
const field = z
  .string()
  .min(1)
  .max(100)
  .regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'expected a top-level body field name')
  .refine((f) => !PROTECTED_FIELDS.has(f), { message: 'this field may not be changed by a hook (use rewrite_model for the model)' });

/** The fixed, safe set of actions. */
export const hookActionSchema = z.discriminatedUnion('type', [
  z.strictObject({ type: z.literal('set_header'), name: requestHeader, value: headerValue }),
  z.strictObject({ type: z.literal('remove_header'), name: requestHeader }),
  z.strictObject({ type: z.literal('rewrite_model'), to: z.string().min(1).max(200) }),
  z.strictObject({ type: z.literal('drop_field'), field }),
  z.strictObject({ type: z.literal('set_field'), field, value: z.json() }),
  z.strictObject({ type: z.literal('tag'), tag: z.string().min(1).max(64).regex(/^[\w.:/-]+$/, 'tags are letters, digits and . : / _ -') }),
  z.strictObject({ type: z.literal('reply_header'), name: replyHeader, value: headerValue }),
]);
export type HookAction = z.infer<typeof hookActionSchema>;

/** When a hook applies; every given field must match (an empty match applies to every request). */
export const hookMatchSchema = z.strictObject({
  /** Endpoint path (`/v1/chat/completions`); `*` matches any run of characters. */
  route: z.string().min(1).max(200).optional(),
  /** Model glob, against the model the client named or the target's upstream model. */
  model: z.string().min(1).max(200).optional(),
  /** Provider id, alias or node prefix (resolved when the request runs: a node added later matches). */
  provider: z.string().min(1).max(200).optional(),
  /** API key id or name. */
  key: z.string().min(1).max(200).optional(),
});

const hookName = z.string().min(1).max(64).regex(/^[\w.-]+$/, 'names are letters, digits and . _ -');

/** A hook as created (POST) or replaced (PUT). */
export const hookInputSchema = z
  .strictObject({
    name: hookName,
    enabled: z.boolean().default(true),
    /** Hooks run in ascending order, then in creation order. */
    order: z.number().int().min(-1_000_000).max(1_000_000).default(100),
    match: hookMatchSchema.default({}),
    actions: z.array(hookActionSchema).min(1).max(MAX_ACTIONS),
  })
  .refine((h) => JSON.stringify(h).length <= MAX_HOOK_BYTES, { message: `a hook's definition is at most ${MAX_HOOK_BYTES} bytes` });
export type HookInput = z.infer<typeof hookInputSchema>;

/** A PATCH: any field of the input. */
export const hookPatchSchema = z.strictObject({
  name: hookName.optional(),
  enabled: z.boolean().optional(),
  order: z.number().int().min(-1_000_000).max(1_000_000).optional(),
  match: hookMatchSchema.optional(),
  actions: z.array(hookActionSchema).min(1).max(MAX_ACTIONS).optional(),
});
export type HookPatch = z.infer<typeof hookPatchSchema>;

export interface Hook extends HookInput {
  id: string;
  createdAt: string;
  updatedAt: string;
}
