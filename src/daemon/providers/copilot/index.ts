import { randomUUID } from 'node:crypto';
import { bearer, type ProviderDef } from '../types.js';

/** The GitHub REST API that turns a GitHub login into a short-lived Copilot token. */
export const GITHUB_API_BASE = 'https://api.github.com';

/**
 * The editor identity Copilot's APIs expect, VS Code's Copilot Chat extension, as public clients send it to
 * both the token exchange and chat: the versions as kangfenmao/cherry-studio
 * src/renderer/src/aiCore/provider/constants.ts pins them; `x-github-api-version` and
 * `x-vscode-user-agent-library-version` as ericc-ch/copilot-api src/lib/api-config.ts sends them
 * (`copilotHeaders` and `githubHeaders`).
 */
export const COPILOT_EDITOR_HEADERS = {
  'editor-version': 'vscode/1.104.1',
  'editor-plugin-version': 'copilot-chat/0.26.7',
  'user-agent': 'GitHubCopilotChat/0.26.7',
  'x-github-api-version': '2025-05-01',
  'x-vscode-user-agent-library-version': 'electron-fetch',
};

type ChatMessage = { role?: unknown; content?: unknown };

/** A chat body's message list (none when it is not Chat Completions). */
function messagesOf(body: Record<string, unknown>): ChatMessage[] {
  return Array.isArray(body.messages) ? (body.messages as ChatMessage[]).filter((m) => m && typeof m === 'object') : [];
}

/**
 * The per-request Copilot chat headers: a new `x-request-id` (ericc-ch/copilot-api `copilotHeaders`);
 * `x-initiator` `agent` when the last message is not the user's (a tool result or an assistant turn being
 * continued), else `user`, and `copilot-vision-request: true` when a message carries an image, which
 * Copilot refuses without it (badlogic/pi-mono packages/ai/src/providers/github-copilot-headers.ts
 * `inferCopilotInitiator`, `hasCopilotVisionInput`).
 */
export function copilotRequestHeaders(body: Record<string, unknown>): Record<string, string> {
  const messages = messagesOf(body);
  const last = messages.at(-1);
  const vision = messages.some((m) => Array.isArray(m.content) && (m.content as Array<{ type?: unknown }>).some((p) => p?.type === 'image_url'));
  return {
    'x-request-id': randomUUID(),
    'x-initiator': last && last.role !== 'user' ? 'agent' : 'user',
    ...(vision ? { 'copilot-vision-request': 'true' } : {}),
  };
}

/**
 * GitHub Copilot: a GitHub device-flow login (the long-lived GitHub token, kept as the refresh token) is
 * exchanged at `api.github.com/copilot_internal/v2/token` for the short-lived Copilot token (the access
 * token, renewed before it expires); chat goes to the API base that exchange names, in Chat Completions
 * format with the Copilot Chat headers.
 */
export const githubCopilot: ProviderDef = {
  id: 'github-copilot',
  name: 'GitHub Copilot (GitHub login)',
  kind: 'oauth',
  format: 'openai-chat',
  baseUrl: 'https://api.githubcopilot.com',
  authKinds: ['oauth'],
  authHeaders: bearer,
  headers: { ...COPILOT_EDITOR_HEADERS, 'copilot-integration-id': 'vscode-chat', 'openai-intent': 'conversation-panel' },
  requestHeaders: (_client, body) => copilotRequestHeaders(body),
  aliases: ['copilot'],
  endpoints: {},
  // The public OAuth app of the Copilot editor plugins (device flow).
  oauth: {
    tokenUrl: 'https://github.com/login/oauth/access_token',
    clientId: 'Iv1.b507a08c87ecfe98',
    body: 'form',
    deviceAuthorizationUrl: 'https://github.com/login/device/code',
    deviceScope: 'read:user',
    refresh: 'copilot-exchange',
  },
  models: [
    { id: 'gpt-4.1', contextLength: 128_000 },
    { id: 'gpt-4o', contextLength: 128_000 },
    { id: 'gpt-5-mini', contextLength: 128_000, reasoning: true },
    { id: 'claude-sonnet-4', contextLength: 128_000 },
    { id: 'gemini-2.5-pro', contextLength: 128_000 },
  ],
};
