import { route, type RouteDef } from '../http/routes.js';
import { agentBridgeState } from './bridge.js';

/**
 * AgentBridge. Local-only (spec "Authentication" 3); it runs each agent binary it finds with `--version`,
 * so it is in the spawn tier: loopback callers only, and never opened by a manage-scope key.
 */
export const agentRoutes: RouteDef[] = [
  route({
    method: 'GET',
    path: '/api/tools/agent-bridge/state',
    sideEffects: true,
    tier: 'spawn',
    tag: 'agents',
    summary: "Coding agents installed on this machine, their versions, whether their settings point at router, and router's endpoints for them",
    handler: ({ services }) => agentBridgeState({ baseUrl: services.listen.url, port: services.listen.port, version: services.version }),
  }),
];
