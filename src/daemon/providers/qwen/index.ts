import { arch, platform } from 'node:process';
import { bearer, type ProviderDef } from '../types.js';

/** The Qwen Code release whose headers `qwen-code` sends (npm @qwen-code/qwen-code, latest at writing). */
export const QWEN_CODE_VERSION = '0.24.4';
const QWEN_USER_AGENT = `QwenCode/${QWEN_CODE_VERSION} (${platform}; ${arch})`;

/**
 * Qwen Code's DashScope headers with a qwen.ai login (QwenLM/qwen-code
 * packages/core/src/core/openaiContentGenerator/provider/dashscope.ts `buildHeaders`, the provider every
 * `qwen-oauth` login uses): `User-Agent` and `X-DashScope-UserAgent` both `QwenCode/<version> (<platform>;
 * <arch>)`, `X-DashScope-CacheControl: enable`, `X-DashScope-AuthType` the auth type (`qwen-oauth`).
 */
export const QWEN_CODE_HEADERS = {
  'user-agent': QWEN_USER_AGENT,
  'x-dashscope-cachecontrol': 'enable',
  'x-dashscope-useragent': QWEN_USER_AGENT,
  'x-dashscope-authtype': 'qwen-oauth',
};

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
  headers: QWEN_CODE_HEADERS,
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
