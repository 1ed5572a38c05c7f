import { COPILOT_EDITOR_HEADERS, GITHUB_API_BASE } from '../providers/copilot/index.js';
import type { ProviderDef } from '../providers/types.js';
import { formatProviderError } from '../routing/provider-error.js';
import { oauthCall } from './http.js';

/** A Copilot token as `copilot_internal/v2/token` returns it. */
export interface CopilotToken {
  token: string;
  /** ISO time the token expires. */
  expiresAt: string;
  /** The chat API base the token is for (`endpoints.api`), when the reply names one. */
  apiBase?: string;
}

/**
 * Exchanges a GitHub login token for a short-lived Copilot token (`GET /copilot_internal/v2/token` with
 * `Authorization: token <github token>`). `githubApi` is the GitHub API base (the oauthEndpoints setting's
 * apiBaseUrl overrides it). Throws `[status]: message` on refusal, the GitHub token never quoted.
 */
export async function exchangeCopilotToken(def: ProviderDef, githubToken: string, githubApi = GITHUB_API_BASE, proxy?: string | null): Promise<CopilotToken> {
  const reply = await oauthCall({
    url: `${githubApi.replace(/\/+$/, '')}/copilot_internal/v2/token`,
    def,
    proxy,
    method: 'GET',
    headers: { authorization: `token ${githubToken}`, ...COPILOT_EDITOR_HEADERS },
  });
  const body = reply.json ?? {};
  if (reply.status >= 400 || typeof body.token !== 'string') {
    const message = typeof body.message === 'string' ? body.message : 'the Copilot token exchange failed';
    throw new Error(formatProviderError(reply.status, message.replaceAll(githubToken, '***')));
  }
  const expires = typeof body.expires_at === 'number' ? body.expires_at * 1000 : Date.now() + 25 * 60_000;
  const endpoints = body.endpoints as { api?: unknown } | undefined;
  return {
    token: body.token,
    expiresAt: new Date(expires).toISOString(),
    ...(typeof endpoints?.api === 'string' ? { apiBase: endpoints.api } : {}),
  };
}
