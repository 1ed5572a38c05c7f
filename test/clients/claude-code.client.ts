/**
 * Claude Code (`claude -p`) through router: Anthropic Messages in, passed through to Anthropic or
 * translated to Chat Completions and Responses. Its settings come from `router config-tool claude-code`.
 */
import { agentSuite } from './suite.js';
import { baseEnv } from './agent.js';
import { ROUTES } from './world.js';

agentSuite(
  'claude-code',
  [
    { name: 'messages-passthrough', model: ROUTES.anthropic, upstream: 'anthropic.messages', fixture: true },
    // For any model name it does not take for a Claude, Claude Code sends another request shape.
    { name: 'messages-to-chat', model: ROUTES.openai, upstream: 'openai.chat', fixture: true },
    { name: 'messages-to-chat-slash', model: ROUTES.chat, upstream: 'openai.chat' },
    { name: 'messages-to-responses', model: ROUTES.responses, upstream: 'openai.responses' },
  ],
  async (world, ws, route, prompt) => {
    await world.cli(['config-tool', 'claude-code', '--model', route.model, '--key', world.key, '--url', world.url, '--config-home', ws.home, '--yes']);
    return {
      args: ['-p', prompt, '--allowedTools', 'Read', '--output-format', 'text'],
      env: {
        ...baseEnv(ws.home),
        // No telemetry, error reports, auto-update or other calls home.
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
        DISABLE_AUTOUPDATER: '1',
      },
    };
  },
);
