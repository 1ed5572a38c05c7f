import { z } from 'zod';
import { route, type RouteDef } from '../http/routes.js';
import { agentBridgeState, type BridgeState } from './bridge.js';

const bridgeReply = z.object({
  server: z.object({
    baseUrl: z.string(),
    version: z.string(),
    endpoints: z.object({
      openai: z.string(),
      anthropic: z.string(),
      gemini: z.string(),
      mcp: z.object({ streamableHttp: z.string(), sse: z.string() }),
      a2a: z.object({ agentCard: z.string(), jsonRpc: z.string() }),
    }),
  }),
  agents: z.array(
    z.object({
      id: z.string(),
      name: z.string(),
      installed: z.boolean(),
      path: z.string().nullable(),
      version: z.string().nullable(),
      files: z.array(z.object({ path: z.string(), exists: z.boolean(), pointsAtRouter: z.boolean(), mcp: z.boolean() })),
      configured: z.boolean(),
    }),
  ),
}) satisfies z.ZodType<BridgeState>;

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
    reply: bridgeReply,
    handler: ({ services }) => agentBridgeState({ baseUrl: services.listen.url, port: services.listen.port, version: services.version }),
  }),
];
