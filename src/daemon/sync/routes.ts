import { z } from 'zod';
import { CLOUD_SIG_HEADER } from '../../shared/sync.js';
import { RouterError } from '../http/errors.js';
import { readBodyBytes } from '../http/body.js';
import { route, type RouteDef } from '../http/routes.js';
import { answerRemote, runSync } from './service.js';

const MiB = 1024 * 1024;
const REMOTE_BODY_LIMIT = 64 * MiB;

/** Sync routes: run a sync (management) and answer another router's sync requests (signed). */
export const syncRoutes: RouteDef[] = [
  route({
    method: 'POST',
    path: '/api/sync/cloud',
    tier: 'management',
    tag: 'sync',
    summary: 'Push this configuration to the sync remote, pull and merge the remote one, or show its status',
    body: z.object({ action: z.enum(['push', 'pull', 'status']) }).strict(),
    handler: ({ services, body }) => runSync(services, body.action),
  }),
  route({
    method: 'POST',
    path: '/api/sync/cloud/remote',
    // Authenticated by the shared secret's HMAC over the body (X-Cloud-Sig), checked in constant time
    // before anything is parsed; 404 while sync is off.
    tier: 'public',
    tag: 'sync',
    summary: 'The remote side of cloud sync: answers a signed push, pull or status from another router',
    rawBody: true,
    bodyLimit: REMOTE_BODY_LIMIT,
    handler: async ({ event, services }) => {
      if (!/^application\/json\b/i.test(event.req.headers.get('content-type') ?? '')) throw new RouterError(415, 'Content-Type must be application/json.');
      const raw = new TextDecoder().decode(await readBodyBytes(event, REMOTE_BODY_LIMIT));
      const reply = answerRemote(services, raw, event.req.headers.get(CLOUD_SIG_HEADER));
      return new Response(reply.body, { status: 200, headers: { 'content-type': 'application/json', [CLOUD_SIG_HEADER]: reply.sig } });
    },
  }),
];
