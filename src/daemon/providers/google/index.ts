import { CODE_ASSIST_METADATA } from '../../translate/formats/code-assist/index.js';
import { bearer, type ProviderDef } from '../types.js';
import { geminiCliHeaders } from './clients.js';

const GOOGLE_TOKEN_URL = 'https://oauth2.googleapis.com/token';
const GOOGLE_AUTHORIZE_URL = 'https://accounts.google.com/o/oauth2/v2/auth';
const GOOGLE_SCOPES = ['https://www.googleapis.com/auth/cloud-platform', 'https://www.googleapis.com/auth/userinfo.email', 'https://www.googleapis.com/auth/userinfo.profile'];

/** The Code Assist API both Google logins call (`v1internal:generateContent`...). */
export const CODE_ASSIST_BASE = 'https://cloudcode-pa.googleapis.com';

/**
 * Gemini CLI: a Google account's Gemini Code Assist entitlement (free tier included). Requests go to the
 * Code Assist endpoint in its `{model, project, request}` envelope; the project is found (or the user
 * onboarded) at login through `loadCodeAssist`/`onboardUser` and kept on the connection.
 */
export const geminiCli: ProviderDef = {
  id: 'gemini-cli',
  name: 'Gemini CLI (Google login)',
  kind: 'oauth',
  format: 'gemini-code-assist',
  baseUrl: CODE_ASSIST_BASE,
  authKinds: ['oauth'],
  authHeaders: bearer,
  // Gemini CLI 0.56.0's headers (providers/google/clients.ts); the fixed ones name the default model, for
  // the setup and health calls; each generate call's user agent names its own model, as Gemini CLI's does.
  headers: geminiCliHeaders('gemini-2.5-pro'),
  requestHeaders: (_client, body) => (typeof body.model === 'string' && /^[\w.:-]{1,100}$/.test(body.model) ? geminiCliHeaders(body.model) : {}),
  endpoints: {},
  // The installed-app client of Gemini CLI (Google publishes installed-app secrets; they are not secret).
  oauth: {
    tokenUrl: GOOGLE_TOKEN_URL,
    clientId: '681255809395-oo8ft2oprdrnp9e3aqf6av3hmdib135j.apps.googleusercontent.com',
    clientSecret: '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',
    body: 'form',
    authorizeUrl: GOOGLE_AUTHORIZE_URL,
    authScope: GOOGLE_SCOPES.join(' '),
    authParams: { access_type: 'offline', prompt: 'consent' },
    redirect: { port: 8085, path: '/oauth2callback', host: 'localhost' },
  },
  models: [
    { id: 'gemini-2.5-pro', contextLength: 1_048_576 },
    { id: 'gemini-2.5-flash', contextLength: 1_048_576 },
    { id: 'gemini-2.5-flash-lite', contextLength: 1_048_576 },
  ],
};

/**
 * Antigravity: the Google login of the Antigravity IDE (imported from its CLI login by the agy-auth
 * routes, or through its own PKCE login). Same Code Assist API, its own client, envelope fields
 * (`userAgent`, `requestType`, `requestId`) and headers.
 */
export const antigravity: ProviderDef = {
  id: 'antigravity',
  name: 'Antigravity (Google login)',
  kind: 'oauth',
  format: 'antigravity',
  baseUrl: CODE_ASSIST_BASE,
  authKinds: ['oauth'],
  authHeaders: bearer,
  headers: {
    'user-agent': 'antigravity/1.11.5 linux/amd64',
    'x-goog-api-client': 'google-cloud-sdk vscode_cloudshelleditor/0.1',
    'client-metadata': JSON.stringify(CODE_ASSIST_METADATA),
  },
  endpoints: {},
  oauth: {
    tokenUrl: GOOGLE_TOKEN_URL,
    clientId: '1071006060591-tmhssin2h21lcre235vtolojh4g403ep.apps.googleusercontent.com',
    clientSecret: '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',
    body: 'form',
    authorizeUrl: GOOGLE_AUTHORIZE_URL,
    authScope: [...GOOGLE_SCOPES, 'https://www.googleapis.com/auth/cclog', 'https://www.googleapis.com/auth/experimentsandconfigs'].join(' '),
    authParams: { access_type: 'offline', prompt: 'consent' },
    redirect: { port: 51121, path: '/oauth-callback', host: 'localhost' },
  },
  models: [
    { id: 'gemini-2.5-pro', contextLength: 1_048_576 },
    { id: 'gemini-2.5-flash', contextLength: 1_048_576 },
    { id: 'gemini-3-pro-preview', contextLength: 1_048_576 },
    { id: 'claude-sonnet-4-5', contextLength: 200_000, maxOutputTokens: 64_000 },
  ],
};
