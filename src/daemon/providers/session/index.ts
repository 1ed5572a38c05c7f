import type { Credential, ProviderDef } from '../types.js';

/**
 * Web-session chat: an OpenAI-compatible chat endpoint reached with a browser session cookie instead of
 * an API key. Such web chats have no function calling, so requests with tools are refused (spec, proxy endpoints: tools to the no-tool web-session provider are a 400).
 * Its base URL is set per connection (`providerSpecificData.baseUrl`).
 */
export const webSession: ProviderDef = {
  id: 'web-session',
  name: 'Web-session chat (cookie)',
  kind: 'web-session',
  format: 'openai-chat',
  baseUrl: 'http://127.0.0.1:1/v1',
  authKinds: ['web-session'],
  authHeaders: (cred: Credential): Record<string, string> => (cred.cookie ? { cookie: cred.cookie } : {}),
  supportsTools: false,
  endpoints: {},
  models: [{ id: 'default' }],
};
