import { bearer, type ProviderDef } from '../types.js';

/** The GitHub REST API that turns a GitHub login into a short-lived Copilot token. */
export const GITHUB_API_BASE = 'https://api.github.com';

/** The editor identity Copilot's chat API expects (VS Code's Copilot Chat extension). */
export const COPILOT_EDITOR_HEADERS = {
  'editor-version': 'vscode/1.104.1',
  'editor-plugin-version': 'copilot-chat/0.26.7',
  'user-agent': 'GitHubCopilotChat/0.26.7',
};

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
