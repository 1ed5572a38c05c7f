/**
 * Codex CLI (`codex exec`) through router: Responses in, passed through to OpenAI or translated to Chat
 * Completions and Anthropic. Its config.toml comes from `router config-tool codex`.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { agentSuite } from './suite.js';
import { baseEnv } from './agent.js';
import { ROUTES } from './world.js';

agentSuite(
  'codex',
  [
    { name: 'responses-passthrough', model: 'openai/gpt-5', upstream: 'openai.responses', fixture: true },
    { name: 'responses-to-chat', model: ROUTES.chat, upstream: 'openai.chat' },
    { name: 'responses-to-anthropic', model: ROUTES.anthropic, upstream: 'anthropic.messages' },
  ],
  async (world, ws, route, prompt) => {
    // The user's own settings, which config-tool must keep: no update check, no analytics.
    mkdirSync(join(ws.home, '.codex'), { recursive: true });
    writeFileSync(join(ws.home, '.codex', 'config.toml'), 'check_for_update_on_startup = false\n\n[analytics]\nenabled = false\n');
    await world.cli(['config-tool', 'codex', '--model', route.model, '--key', world.key, '--url', world.url, '--config-home', ws.home, '--yes']);
    return {
      args: ['exec', '--skip-git-repo-check', '--dangerously-bypass-approvals-and-sandbox', prompt],
      env: { ...baseEnv(ws.home) },
    };
  },
);
