import { z } from 'zod';
import { badRequest, RouterError } from '../http/errors.js';
import { isoTime, NO_CONTENT } from '../http/replies.js';
import { json, noContent, route, type RouteDef } from '../http/routes.js';
import type { DeliveryRecord, WebhookView } from '../../shared/records.js';
import type { Services } from '../services.js';
import { DestinationError } from './destination.js';
import type { TestResult } from './service.js';
import { maskSecret } from './signing.js';
import { WEBHOOK_KINDS, type WebhookKind, type WebhookRecord } from './store.js';

const idParam = z.string().uuid();
const kind = z.enum(WEBHOOK_KINDS as [WebhookKind, ...WebhookKind[]]);
const url = z.string().trim().min(1).max(2000);
// Unknown names are accepted and ignored at dispatch (spec "Events"); an empty list would subscribe to nothing.
const events = z
  .array(z.string().trim().min(1).max(100))
  .min(1)
  .max(50)
  .transform((list) => [...new Set(list)]);
// At least 16 characters: the listed form shows the first 10, which must not be the whole secret.
const secret = z.string().min(16).max(256).regex(/^\S+$/, 'must not contain whitespace');
const description = z.string().max(500).nullable();
// The resource stores enabled as 0/1; clients naturally send booleans. Both are accepted.
const enabled = z.union([z.boolean(), z.literal(0), z.literal(1)]).transform((v) => v === true || v === 1);
// Output-only fields a client may echo back from GET in a full-object PUT: accepted and ignored.
const readOnly = z.unknown().optional();

const createBody = z
  .object({
    url,
    kind: kind.default('custom'),
    secret: secret.optional(),
    events: events.optional(),
    description: description.optional(),
    enabled: enabled.optional(),
  })
  .strict();

const updateBody = z
  .object({
    url: url.optional(),
    kind: kind.optional(),
    secret: z.string().max(256).optional(),
    events: events.optional(),
    description: description.optional(),
    enabled: enabled.optional(),
    id: readOnly,
    created_at: readOnly,
    last_triggered_at: readOnly,
    last_status: readOnly,
    failure_count: readOnly,
  })
  .strict();

// A Telegram chat id: numeric (negative for groups and channels) or a public @channelusername.
const TELEGRAM_CHAT = /^(-?\d{1,20}|@[A-Za-z][A-Za-z0-9_]{3,31})$/;

function webhookId(params: Record<string, string>): string {
  const id = params.id ?? '';
  if (!idParam.safeParse(id).success) throw new RouterError(404, 'Webhook not found.');
  return id;
}

function existing(services: Services, params: Record<string, string>): WebhookRecord {
  const rec = services.webhooks.store.get(webhookId(params));
  if (!rec) throw new RouterError(404, 'Webhook not found.');
  return rec;
}

/** The destination rule of create and update: chat id for telegram, public http(s) URL otherwise. */
function checkUrl(services: Services, k: WebhookKind, u: string): void {
  if (k === 'telegram') {
    if (!TELEGRAM_CHAT.test(u)) throw badRequest("Invalid field 'url': for kind telegram, url holds a chat id (-100123... or @channel)", 'url');
    return;
  }
  try {
    services.webhooks.checkDestination(k, u);
  } catch (err) {
    if (err instanceof DestinationError) {
      // Name the switch that allows it, so a refused local receiver is one setting away, not a search.
      const hint = /not public/.test(err.message) ? '; the setting allowPrivateWebhookDestinations allows private and loopback destinations' : '';
      throw badRequest(`Invalid field 'url': ${err.message}${hint}`, 'url');
    }
    throw err;
  }
}

/** Webhooks CRUD and the test endpoint (spec "Webhooks (auth Mgmt)"). */
/** A webhook as the replies show it: its secret masked (whole in the create reply only). */
const webhookReply = z.object({
  id: z.string(),
  url: z.string(),
  kind,
  events: z.array(z.string()),
  enabled: z.union([z.literal(0), z.literal(1)]),
  description: z.string().nullable(),
  created_at: isoTime,
  last_triggered_at: isoTime.nullable(),
  last_status: z.number().nullable(),
  failure_count: z.number(),
  secret: z.string(),
}) satisfies z.ZodType<WebhookView>;
const testReply = z.object({ delivered: z.boolean(), status: z.number(), responseBody: z.string(), error: z.string() }) satisfies z.ZodType<TestResult>;
const deliveriesReply = z.object({
  deliveries: z.array(
    z.object({ at: isoTime, event: z.string(), attempt: z.number(), status: z.number(), ok: z.boolean(), error: z.string(), test: z.boolean() }) satisfies z.ZodType<DeliveryRecord>,
  ),
});

export const webhookRoutes: RouteDef[] = [
  route({
    method: 'GET',
    path: '/api/webhooks',
    tier: 'management',
    tag: 'webhooks',
    summary: 'List webhooks (secrets masked to their first 10 characters)',
    reply: z.object({ webhooks: z.array(webhookReply) }),
    handler: ({ services }) => ({ webhooks: services.webhooks.store.list().map((r) => services.webhooks.store.view(r)) }),
  }),
  route({
    method: 'POST',
    path: '/api/webhooks',
    tier: 'management',
    tag: 'webhooks',
    summary: 'Create a webhook (the whole secret is in this reply only)',
    body: createBody,
    status: 201,
    reply: webhookReply,
    handler: ({ services, body }) => {
      checkUrl(services, body.kind, body.url);
      const { record, secret: whole } = services.webhooks.store.create({ ...body, events: body.events ?? ['*'] });
      return json(201, { ...record, secret: whole });
    },
  }),
  route({
    method: 'GET',
    path: '/api/webhooks/:id',
    tier: 'management',
    tag: 'webhooks',
    summary: 'One webhook (secret masked)',
    reply: webhookReply,
    handler: ({ services, params }) => services.webhooks.store.view(existing(services, params)),
  }),
  route({
    method: 'PUT',
    path: '/api/webhooks/:id',
    tier: 'management',
    tag: 'webhooks',
    summary: 'Update a webhook (any of url, kind, events, secret, enabled, description); enabling resets failure_count',
    body: updateBody,
    reply: webhookReply,
    handler: ({ services, params, body }) => {
      const rec = existing(services, params);
      const store = services.webhooks.store;
      let newSecret = body.secret;
      // The masked secret echoed back from GET means "unchanged", never "set the secret to this text".
      if (newSecret !== undefined && newSecret === maskSecret(store.secretOf(rec.id) ?? '')) newSecret = undefined;
      if (newSecret !== undefined) {
        const parsed = secret.safeParse(newSecret);
        if (!parsed.success) throw badRequest(`Invalid field 'secret': ${parsed.error.issues[0]!.message}`, 'secret');
      }
      if (body.url !== undefined || body.kind !== undefined) checkUrl(services, body.kind ?? rec.kind, body.url ?? rec.url);
      const updated = store.update(rec.id, {
        url: body.url,
        kind: body.kind,
        events: body.events,
        description: body.description,
        enabled: body.enabled,
        secret: newSecret,
      });
      if (!updated) throw new RouterError(404, 'Webhook not found.');
      return store.view(updated);
    },
  }),
  route({
    method: 'DELETE',
    path: '/api/webhooks/:id',
    tier: 'management',
    tag: 'webhooks',
    summary: 'Delete a webhook',
    status: 204,
    reply: NO_CONTENT,
    handler: ({ services, params }) => {
      if (!services.webhooks.store.remove(webhookId(params))) throw new RouterError(404, 'Webhook not found.');
      services.webhooks.forget(webhookId(params));
      return noContent();
    },
  }),
  route({
    method: 'POST',
    path: '/api/webhooks/:id/test',
    tier: 'management',
    tag: 'webhooks',
    summary: 'Send one test.ping (no retries); replies {delivered, status, responseBody (first 2048 bytes), error}',
    reply: testReply,
    handler: ({ services, params }) => services.webhooks.test(existing(services, params)),
  }),
  route({
    method: 'GET',
    path: '/api/webhooks/:id/deliveries',
    tier: 'management',
    tag: 'webhooks',
    summary: 'The last 50 delivery attempts of a webhook, newest first: time, event, attempt number, status (0 = network error), error, whether a test (kept in memory since the daemon started)',
    reply: deliveriesReply,
    handler: ({ services, params }) => ({ deliveries: services.webhooks.deliveries(existing(services, params).id) }),
  }),
];
