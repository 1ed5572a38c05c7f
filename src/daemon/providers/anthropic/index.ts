import type { Credential, ProviderDef } from '../types.js';

const ANTHROPIC_VERSION = '2023-06-01';

const MODELS = [
  { id: 'claude-opus-4-1', contextLength: 200_000, maxOutputTokens: 32_000 },
  { id: 'claude-opus-4-5', contextLength: 200_000, maxOutputTokens: 64_000 },
  { id: 'claude-sonnet-4-5', contextLength: 200_000, maxOutputTokens: 64_000 },
  { id: 'claude-sonnet-4', contextLength: 200_000, maxOutputTokens: 64_000 },
  { id: 'claude-haiku-4-5', contextLength: 200_000, maxOutputTokens: 64_000 },
  { id: 'claude-3-5-haiku-latest', contextLength: 200_000, maxOutputTokens: 8_192 },
];

/** Anthropic Messages with an API key (`x-api-key`). */
export const anthropic: ProviderDef = {
  id: 'anthropic',
  name: 'Anthropic',
  kind: 'cloud',
  format: 'anthropic',
  baseUrl: 'https://api.anthropic.com/v1',
  authKinds: ['api-key'],
  authHeaders: (cred: Credential): Record<string, string> => (cred.apiKey ? { 'x-api-key': cred.apiKey } : {}),
  headers: { 'anthropic-version': ANTHROPIC_VERSION },
  aliases: ['claude'],
  endpoints: { models: true },
  models: MODELS,
};

/** The identity a Claude-login token must present: Claude Code's own opening system prompt. */
export const CLAUDE_CODE_IDENTITY = "You are Claude Code, Anthropic's official CLI for Claude.";

/** Puts Claude Code's identity first in `system` (a string or text blocks), once. */
function withClaudeCodeIdentity(body: Record<string, unknown>): void {
  const identity = { type: 'text', text: CLAUDE_CODE_IDENTITY };
  const system = body.system;
  if (typeof system === 'string') {
    if (!system.startsWith(CLAUDE_CODE_IDENTITY)) body.system = system ? [identity, { type: 'text', text: system }] : [identity];
  } else if (Array.isArray(system)) {
    const first = system[0] as { text?: unknown } | undefined;
    if (first?.text !== CLAUDE_CODE_IDENTITY) body.system = [identity, ...system];
  } else body.system = [identity];
}

/**
 * Claude Code: Claude-account (Pro/Max) OAuth tokens on the Messages API, sent as Claude Code sends them:
 * Bearer token, the `oauth-2025-04-20` and `claude-code-20250219` betas, its `x-app`/user agent, and its
 * identity as the first system block (Anthropic refuses a Claude-login token without it).
 */
export const claudeCode: ProviderDef = {
  id: 'claude-code',
  name: 'Claude Code (Claude login)',
  kind: 'oauth',
  format: 'anthropic',
  baseUrl: 'https://api.anthropic.com/v1',
  authKinds: ['oauth'],
  authHeaders: (cred: Credential): Record<string, string> => (cred.accessToken ? { authorization: `Bearer ${cred.accessToken}` } : {}),
  // As Claude Code 2.1.332 sends them (the @anthropic-ai/claude-code-linux-x64 binary's bundled JS; 2.0.77's
  // cli.js reads the same): defaultHeaders {"x-app": "cli", "User-Agent": `claude-cli/${VERSION} (external,
  // ${CLAUDE_CODE_ENTRYPOINT})`} with the entrypoint "cli"; betas "claude-code-20250219" (non-Haiku models)
  // and "oauth-2025-04-20" (a claude.ai login); the SDK's dangerouslyAllowBrowser adds the browser-access header.
  headers: {
    'anthropic-version': ANTHROPIC_VERSION,
    'anthropic-beta': 'claude-code-20250219,oauth-2025-04-20',
    'anthropic-dangerous-direct-browser-access': 'true',
    'x-app': 'cli',
    'user-agent': 'claude-cli/2.1.332 (external, cli)',
  },
  endpoints: {},
  adaptBody: withClaudeCodeIdentity,
  // The public client of the Claude Code CLI (claude.ai login, PKCE); tokens refreshed at the console endpoint.
  oauth: {
    tokenUrl: 'https://console.anthropic.com/v1/oauth/token',
    clientId: '9d1c250a-e61b-44d9-88ed-5944d1962f5e',
    body: 'json',
    exchangeState: true,
    authorizeUrl: 'https://claude.ai/oauth/authorize',
    authScope: 'org:create_api_key user:profile user:inference',
    authParams: { code: 'true' },
    redirect: { port: 54545, path: '/callback', host: 'localhost' },
    pasteRedirectUri: 'https://console.anthropic.com/oauth/code/callback',
  },
  models: MODELS,
};
