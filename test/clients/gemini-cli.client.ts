/**
 * Gemini CLI (`gemini -p ... -m <provider>/<model>`) through router: Gemini generateContent in, passed
 * through to Gemini or translated to Chat Completions and Anthropic.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { agentSuite } from './suite.js';
import { baseEnv } from './agent.js';
import { ROUTES } from './world.js';

agentSuite(
  'gemini-cli',
  [
    { name: 'gemini-passthrough', model: ROUTES.gemini, upstream: 'gemini.stream', fixture: true },
    { name: 'gemini-to-chat', model: ROUTES.openai, upstream: 'openai.chat' },
    { name: 'gemini-to-chat-slash', model: ROUTES.chat, upstream: 'openai.chat' },
    { name: 'gemini-to-anthropic', model: ROUTES.anthropic, upstream: 'anthropic.messages' },
  ],
  (world, ws, route, prompt) => {
    // No usage statistics, telemetry or update checks.
    mkdirSync(join(ws.home, '.gemini'), { recursive: true });
    writeFileSync(
      join(ws.home, '.gemini', 'settings.json'),
      JSON.stringify({
        // "gateway", what GOOGLE_GEMINI_BASE_URL alone selects, is refused by -p ("Invalid auth method selected").
        security: { auth: { selectedType: 'gemini-api-key' } },
        privacy: { usageStatisticsEnabled: false },
        telemetry: { enabled: false },
        general: { enableAutoUpdate: false, enableAutoUpdateNotification: false },
      }),
    );
    return {
      args: ['-p', prompt, '-m', route.model, '--skip-trust'],
      env: { ...baseEnv(ws.home), GOOGLE_GEMINI_BASE_URL: world.url, GEMINI_API_KEY: world.key },
    };
  },
);
