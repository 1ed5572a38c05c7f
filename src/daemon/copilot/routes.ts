import { route, type RouteDef } from '../http/routes.js';
import { assistantBody, runAssistant } from './assistant.js';

/** The built-in assistant (spec "Other management routes": POST /api/copilot/chat; Authentication 3). */
export const copilotRoutes: RouteDef[] = [
  route({
    method: 'POST',
    path: '/api/copilot/chat',
    tier: 'copilot',
    tag: 'agents',
    summary: "Assistant chat about this router {messages, model?}: answers using router's MCP tools (loopback; a manage-scope key only with copilotAllowManageKey)",
    body: assistantBody,
    handler: ({ services, auth, body }) => runAssistant(services, auth, body),
  }),
];
