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

/** Claude Code: Claude-account OAuth tokens (Bearer plus the OAuth beta header). */
export const claudeCode: ProviderDef = {
  id: 'claude-code',
  name: 'Claude Code (Claude login)',
  kind: 'oauth',
  format: 'anthropic',
  baseUrl: 'https://api.anthropic.com/v1',
  authKinds: ['oauth'],
  authHeaders: (cred: Credential): Record<string, string> => (cred.accessToken ? { authorization: `Bearer ${cred.accessToken}` } : {}),
  headers: { 'anthropic-version': ANTHROPIC_VERSION, 'anthropic-beta': 'oauth-2025-04-20' },
  endpoints: {},
  // The public client id of the Claude Code CLI; its tokens are refreshed at the console token endpoint.
  oauth: { tokenUrl: 'https://console.anthropic.com/v1/oauth/token', clientId: '9d1c250a-e61b-44d9-88ed-5944d1962f5e', body: 'json' },
  models: MODELS,
};
