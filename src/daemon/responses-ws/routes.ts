import { RouterError } from '../http/errors.js';
import { WEBSOCKET } from '../http/replies.js';
import { noContent, route, type RouteDef } from '../http/routes.js';
import { checkLiveOrigin } from '../live/origin.js';
import { UPGRADE_SLOT, type UpgradeSlot } from '../live/routes.js';
import { checkHandshake } from '../live/websocket.js';

/**
 * `GET /v1/responses` with `Upgrade: websocket`: the Responses API over one WebSocket (client tier, so the
 * key is checked as for `POST /v1/responses`, its path scopes included). A browser's Origin must be one
 * of router's own or an `allowedOrigins` entry, as for the live WebSocket: a page elsewhere could
 * otherwise spend the user's dashboard session.
 */
export const responsesSocketRoutes: RouteDef[] = [
  route({
    method: 'GET',
    path: '/v1/responses',
    tier: 'client',
    tag: 'proxy',
    summary: 'Responses over WebSocket: response.create frames in, the Responses stream events out, one JSON frame each (docs/responses-websocket.md)',
    status: 101,
    reply: WEBSOCKET,
    handler: ({ event, services, auth }) => {
      const slot = (event.context as Record<symbol, UpgradeSlot | undefined>)[UPGRADE_SLOT];
      if (!slot) {
        throw new RouterError(426, 'GET /v1/responses is the WebSocket transport: connect with Upgrade: websocket, or POST /v1/responses.', {
          headers: { Upgrade: 'websocket' },
        });
      }
      const headers = event.req.headers;
      const verdict = checkLiveOrigin(headers.get('origin'), services.listen, services.settings.get().allowedOrigins);
      if (!verdict.ok) throw new RouterError(403, verdict.message.replace('the live channel', 'a Responses WebSocket'));
      const problem = checkHandshake(headers);
      if (problem) throw new RouterError(problem.status, problem.message, { headers: problem.headers });
      if (!services.responsesSocket.accepting) throw new RouterError(503, 'Too many Responses WebSockets are open; try again later.');
      slot.responses = { auth, headers };
      return noContent();
    },
  }),
];
