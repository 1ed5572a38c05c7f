/**
 * opencode (`opencode run`) through router: Chat Completions in (its OpenAI-compatible provider), passed
 * through to a Chat Completions upstream or translated to Anthropic. Its opencode.json comes from
 * `router config-tool opencode`.
 */
import { agentSuite } from './suite.js';
import { baseEnv } from './agent.js';
import { ROUTES } from './world.js';

agentSuite(
  'opencode',
  [
    { name: 'chat-passthrough', model: ROUTES.chat, upstream: 'openai.chat', fixture: true },
    { name: 'chat-to-anthropic', model: ROUTES.anthropic, upstream: 'anthropic.messages' },
    { name: 'chat-to-responses', model: ROUTES.responses, upstream: 'openai.responses' },
    { name: 'chat-to-gemini', model: ROUTES.gemini, upstream: 'gemini.stream' },
  ],
  async (world, ws, route, prompt) => {
    await world.cli(['config-tool', 'opencode', '--model', route.model, '--key', world.key, '--url', world.url, '--config-home', ws.home, '--yes']);
    return {
      args: ['run', prompt, '--print-logs', '--log-level', 'WARN'],
      env: {
        ...baseEnv(ws.home),
        // No models.dev catalogue fetch, auto-update, plugins (their npm install), sharing or LSP downloads.
        OPENCODE_PURE: '1',
        OPENCODE_DISABLE_SHARE: '1',
        OPENCODE_DISABLE_MODELS_FETCH: '1',
        OPENCODE_DISABLE_AUTOUPDATE: '1',
        OPENCODE_DISABLE_DEFAULT_PLUGINS: '1',
        OPENCODE_DISABLE_LSP_DOWNLOAD: '1',
      },
    };
  },
);
