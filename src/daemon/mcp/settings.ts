import { z } from 'zod';
import { about } from '../settings/definitions.js';
import type { SettingsSection } from '../settings/registry.js';

/**
 * Settings of the agent surfaces (docs/agents.md): the MCP server's limits, and the model or combo the
 * A2A agent and the assistant answer with ('' = not configured: those routes answer 409 until it is set).
 */
export const agentSettingsSchema = z.object({
  assistantModel: z.string().max(300).default('').describe('Model or combo the built-in assistant (POST /api/copilot/chat) uses when the request names none.'),
  a2aModel: z.string().max(300).default('').describe('Model or combo the A2A agent (POST /api/a2a) answers with.'),
  mcpSessionIdleSeconds: z.number().int().min(10).max(86_400).default(1800).describe('An MCP session unused for this long is closed (seconds).'),
  mcpMaxSessions: z.number().int().min(1).max(1000).default(32).describe('Open MCP sessions (both transports) at most; a new one beyond it is refused with 503.'),
  mcpMaxPayloadBytes: z.number().int().min(1024).max(64 * 1024 * 1024).default(1024 * 1024).describe('Largest MCP message (a POST body) in bytes.'),
  mcpAuditRetentionDays: z.number().int().min(1).max(3650).default(30).describe('Days MCP audit rows are kept.'),
  assistantMaxToolRounds: z.number().int().min(1).max(20).default(6).describe('Tool-calling rounds the assistant may make before it must answer.'),
});
export type AgentSettings = z.infer<typeof agentSettingsSchema>;

/** The `agents` settings section. */
export const agentSettings: SettingsSection<AgentSettings> = {
  key: 'agents',
  schema: agentSettingsSchema.prefault({}).meta(about({ group: 'agents', description: 'MCP server limits and the models of the A2A agent and the assistant (docs/agents.md).' })),
};

declare module '../settings/registry.js' {
  interface FeatureSettings {
    agents: AgentSettings;
  }
}
