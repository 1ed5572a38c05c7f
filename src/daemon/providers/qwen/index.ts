import { bearer, type ProviderDef } from '../types.js';

/** Qwen's `resource_url` (a host, or a URL) as the OpenAI-compatible base URL (`.../v1`). */
export function resourceBase(resource: string): string {
  const withScheme = /^https?:\/\//i.test(resource) ? resource : `https://${resource}`;
  const trimmed = withScheme.replace(/\/+$/, '');
  return trimmed.endsWith('/v1') ? trimmed : `${trimmed}/v1`;
}

/**
 * Qwen Code: a qwen.ai login (device flow with PKCE) on an OpenAI-compatible endpoint. The token reply's
 * `resource_url` names the account's API host (`https://<resource_url>/v1`, kept on the connection);
 * DashScope's compatible mode is the default.
 */
export const qwenCode: ProviderDef = {
  id: 'qwen-code',
  name: 'Qwen Code (qwen.ai login)',
  kind: 'oauth',
  format: 'openai-chat',
  baseUrl: 'https://dashscope.aliyuncs.com/compatible-mode/v1',
  authKinds: ['oauth'],
  authHeaders: bearer,
  headers: { 'user-agent': 'QwenCode/0.0.14 (linux; x64)', 'x-dashscope-authtype': 'qwen-oauth', 'x-dashscope-useragent': 'QwenCode/0.0.14 (linux; x64)' },
  endpoints: {},
  // A login stores the base as baseUrl; an imported Qwen Code credential file keeps its resource_url.
  connectionBaseUrl: (data) => (typeof data.resourceUrl === 'string' ? resourceBase(data.resourceUrl) : undefined),
  oauth: {
    tokenUrl: 'https://chat.qwen.ai/api/v1/oauth2/token',
    clientId: 'f0304373b74a44d2b584a3fb70ca9e56',
    body: 'form',
    deviceAuthorizationUrl: 'https://chat.qwen.ai/api/v1/oauth2/device/code',
    deviceScope: 'openid profile email model.completion',
    devicePkce: true,
  },
  models: [
    { id: 'qwen3-coder-plus', contextLength: 1_000_000 },
    { id: 'qwen3-coder-flash', contextLength: 1_000_000 },
  ],
};
