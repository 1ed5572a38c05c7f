import type { AuthInfo } from '../auth/pipeline.js';
import { RouterError } from '../http/errors.js';
import { WEBSOCKET } from '../http/replies.js';
import { noContent, route, type RouteDef } from '../http/routes.js';
import { checkLiveOrigin } from './origin.js';
import { checkHandshake } from './websocket.js';

/** Context key under which the upgrade hook (attach.ts) hands the route its slot. */
export const UPGRADE_SLOT = Symbol.for('router.live.upgrade');

/** Filled by the live route when it accepts an upgrade; the hook then completes the handshake. */
export interface UpgradeSlot {
  accepted?: { key: string };
  /** Set by GET /v1/responses (responses-ws/routes.ts): the caller and the upgrade's headers. */
  responses?: { auth: AuthInfo; headers: Headers };
}

/** The live dashboard WebSocket (management tier, plus the WebSocket Origin rule). */
export const liveRoutes: RouteDef[] = [
  route({
    method: 'GET',
    path: '/api/live',
    tier: 'management',
    tag: 'live',
    summary: 'Live WebSocket: request and status messages (docs/events.md); Origin checked before the upgrade',
    status: 101,
    reply: WEBSOCKET,
    handler: ({ event, services }) => {
      const slot = (event.context as Record<symbol, UpgradeSlot | undefined>)[UPGRADE_SLOT];
      if (!slot) {
        throw new RouterError(426, 'The live channel is a WebSocket: connect with Upgrade: websocket.', { headers: { Upgrade: 'websocket' } });
      }
      const headers = event.req.headers;
      const verdict = checkLiveOrigin(headers.get('origin'), services.listen, services.settings.get().allowedOrigins);
      if (!verdict.ok) throw new RouterError(403, verdict.message);
      const problem = checkHandshake(headers);
      if (problem) throw new RouterError(problem.status, problem.message, { headers: problem.headers });
      if (!services.live.accepting) throw new RouterError(503, 'Too many live connections; try again later.');
      slot.accepted = { key: headers.get('sec-websocket-key')! };
      return noContent();
    },
  }),
];
