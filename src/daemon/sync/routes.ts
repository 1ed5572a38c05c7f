import { z } from 'zod';
import { CLOUD_SIG_HEADER, SYNC_MAX_BODY_BYTES, type SyncReply } from '../../shared/sync.js';
import { readBodyBytes } from '../http/body.js';
import { isoTime, rawReply } from '../http/replies.js';
import { route, type RouteDef } from '../http/routes.js';
import { admitRemote, answerRemote, runSync } from './service.js';

const action = z.enum(['push', 'pull', 'status']);
const syncReply = z.object({
  action,
  report: z
    .object({
      changes: z.array(
        z.object({
          kind: z.enum(['connection', 'node', 'combo', 'key', 'setting']),
          name: z.string(),
          result: z.enum(['created', 'updated', 'kept-local', 'skipped']),
          reason: z.string().optional(),
        }),
      ),
      unchanged: z.number(),
    })
    .optional(),
  remote: z.object({ exportedAt: isoTime.nullable(), counts: z.record(z.string(), z.number()) }).optional(),
  lastSync: z.object({ action, at: isoTime }).nullable().optional(),
}) satisfies z.ZodType<SyncReply>;

/** Sync routes: run a sync (management) and answer another router's sync requests (signed). */
export const syncRoutes: RouteDef[] = [
  route({
    method: 'POST',
    path: '/api/sync/cloud',
    tier: 'management',
    tag: 'sync',
    summary: 'Push this configuration to the sync remote, pull and merge the remote one, or show its status',
    body: z.object({ action }).strict(),
    reply: syncReply,
    handler: ({ services, body }) => runSync(services, body.action),
  }),
  route({
    method: 'POST',
    path: '/api/sync/cloud/remote',
    // Authenticated by the shared secret: X-Cloud-Sync-Auth (nonce, time, length) is checked before a byte
    // of the body is read, then the body's HMAC (X-Cloud-Sig), both in constant time; 404 while sync is off.
    tier: 'public',
    tag: 'sync',
    summary: 'The remote side of cloud sync: answers a signed push, pull or status from another router',
    rawBody: true,
    bodyLimit: SYNC_MAX_BODY_BYTES,
    // The signed bytes of the sync protocol (src/shared/sync.ts), read by the other router, not a client.
    reply: rawReply('application/json'),
    handler: async ({ event, services }) => {
      const admitted = await admitRemote(services, event.req.headers);
      const raw = new TextDecoder().decode(await readBodyBytes(event, admitted.auth.length));
      const reply = await answerRemote(services, admitted, raw, event.req.headers.get(CLOUD_SIG_HEADER));
      return new Response(reply.body, { status: 200, headers: { 'content-type': 'application/json', [CLOUD_SIG_HEADER]: reply.sig } });
    },
  }),
];
