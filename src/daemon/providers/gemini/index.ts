import type { Credential, ProviderDef } from '../types.js';

/** Google Gemini API (generateContent), keyed by `x-goog-api-key`, never by a query-string key. */
export const gemini: ProviderDef = {
  id: 'gemini',
  name: 'Google Gemini',
  kind: 'cloud',
  format: 'gemini',
  baseUrl: 'https://generativelanguage.googleapis.com/v1beta',
  authKinds: ['api-key', 'oauth'],
  authHeaders: (cred: Credential): Record<string, string> =>
    cred.accessToken ? { authorization: `Bearer ${cred.accessToken}` } : cred.apiKey ? { 'x-goog-api-key': cred.apiKey } : {},
  aliases: ['google'],
  // Images: Gemini image models through generateContent with image output, Imagen through :predict (translated).
  endpoints: { models: true, images: true },
  models: [
    { id: 'gemini-2.5-pro', contextLength: 1_048_576 },
    { id: 'gemini-2.5-flash', contextLength: 1_048_576 },
    { id: 'gemini-2.5-flash-lite', contextLength: 1_048_576 },
    { id: 'gemini-2.0-flash', contextLength: 1_048_576 },
  ],
};
