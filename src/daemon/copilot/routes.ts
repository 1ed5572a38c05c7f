import { z } from 'zod';
import { route, type RouteDef } from '../http/routes.js';
import { type AssistantReply, assistantBody, runAssistant } from './assistant.js';

const assistantReply = z.object({
  reply: z.string(),
  model: z.string(),
  toolCalls: z.array(z.object({ name: z.string(), arguments: z.string(), ok: z.boolean(), error: z.string().optional() })),
  rounds: z.number(),
  usage: z.object({ inputTokens: z.number(), outputTokens: z.number() }),
}) satisfies z.ZodType<AssistantReply>;

/** The built-in assistant (spec "Other management routes": POST /api/copilot/chat; Authentication 3). */
export const copilotRoutes: RouteDef[] = [
  route({
    method: 'POST',
    path: '/api/copilot/chat',
    tier: 'copilot',
    tag: 'agents',
    summary: "Assistant chat about this router {messages, model?}: answers using router's MCP tools (loopback; a manage-scope key only with copilotAllowManageKey)",
    body: assistantBody,
    reply: assistantReply,
    handler: ({ services, auth, body }) => runAssistant(services, auth, body),
  }),
];
