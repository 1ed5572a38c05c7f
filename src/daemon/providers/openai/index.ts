import { bearer, type ProviderDef } from '../types.js';

/** OpenAI: chat, responses, legacy completions, embeddings, images, audio and moderations natively. */
export const openai: ProviderDef = {
  id: 'openai',
  name: 'OpenAI',
  kind: 'cloud',
  format: 'openai-chat',
  baseUrl: 'https://api.openai.com/v1',
  authKinds: ['api-key'],
  authHeaders: bearer,
  aliases: ['oai'],
  endpoints: {
    responses: true,
    completions: true,
    embeddings: true,
    models: true,
    images: true,
    imageEdits: true,
    speech: true,
    transcriptions: true,
    translations: true,
    moderations: true,
  },
  chatTokenLimit: 'max_completion_tokens',
  models: [
    { id: 'gpt-5', contextLength: 400_000, maxOutputTokens: 128_000, reasoning: true },
    { id: 'gpt-5-mini', contextLength: 400_000, maxOutputTokens: 128_000, reasoning: true },
    { id: 'gpt-5-nano', contextLength: 400_000, maxOutputTokens: 128_000, reasoning: true },
    { id: 'gpt-4.1', contextLength: 1_047_576, maxOutputTokens: 32_768 },
    { id: 'gpt-4.1-mini', contextLength: 1_047_576, maxOutputTokens: 32_768 },
    { id: 'gpt-4o', contextLength: 128_000, maxOutputTokens: 16_384 },
    { id: 'gpt-4o-mini', contextLength: 128_000, maxOutputTokens: 16_384 },
    { id: 'o3', contextLength: 200_000, maxOutputTokens: 100_000, reasoning: true },
    { id: 'o4-mini', contextLength: 200_000, maxOutputTokens: 100_000, reasoning: true },
    { id: 'gpt-3.5-turbo-instruct', contextLength: 4_096 },
    { id: 'text-embedding-3-small', contextLength: 8_191 },
    { id: 'text-embedding-3-large', contextLength: 8_191 },
  ],
};

/**
 * Codex: ChatGPT-account (Plus/Pro) OAuth tokens on the ChatGPT backend's Responses API, with the Codex
 * CLI's headers: `chatgpt-account-id` (from the login's id_token), `OpenAI-Beta: responses=experimental`,
 * `originator: codex_cli_rs`. The backend keeps no responses (`store: false` is required).
 */
export const codex: ProviderDef = {
  id: 'codex',
  name: 'OpenAI Codex (ChatGPT login)',
  kind: 'oauth',
  format: 'openai-responses',
  baseUrl: 'https://chatgpt.com/backend-api/codex',
  authKinds: ['oauth'],
  authHeaders: bearer,
  headers: { 'openai-beta': 'responses=experimental', originator: 'codex_cli_rs', 'user-agent': 'codex_cli_rs/0.46.0' },
  connectionHeaders: (data): Record<string, string> => (typeof data.accountId === 'string' ? { 'chatgpt-account-id': data.accountId } : {}),
  adaptBody: (body) => {
    body.store = false;
  },
  endpoints: { responses: true },
  // The public client of the Codex CLI (ChatGPT login, PKCE, loopback redirect on port 1455).
  oauth: {
    tokenUrl: 'https://auth.openai.com/oauth/token',
    clientId: 'app_EMoamEEZ73f0CkXaXp7hrann',
    body: 'json',
    exchangeBody: 'form',
    scope: 'openid profile email',
    authorizeUrl: 'https://auth.openai.com/oauth/authorize',
    authScope: 'openid profile email offline_access',
    authParams: { id_token_add_organizations: 'true', codex_cli_simplified_flow: 'true', originator: 'codex_cli_rs' },
    redirect: { port: 1455, path: '/auth/callback', host: 'localhost' },
  },
  models: [
    { id: 'gpt-5', contextLength: 400_000, maxOutputTokens: 128_000, reasoning: true },
    { id: 'gpt-5-codex', contextLength: 400_000, maxOutputTokens: 128_000, reasoning: true },
  ],
};
