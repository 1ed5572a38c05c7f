import { connectionProxy } from '../net/outbound-proxy.js';
import type { Connection } from '../providers/connections.js';
import type { ProviderDef } from '../providers/types.js';
import type { Services } from '../services.js';
import { discoverProject } from './code-assist.js';
import { exchangeCopilotToken } from './copilot.js';
import { endpointOverride, oauthEndpoints } from './endpoints.js';
import { jwtClaims } from './http.js';
import { resourceBase } from './refresh.js';

/** Tokens a login or an import produced, before the provider's own finishing steps. */
export interface LoginTokens {
  accessToken?: string;
  refreshToken?: string;
  idToken?: string;
  /** ISO time the access token expires, null when unknown. */
  expiresAt: string | null;
  /** Provider-specific fields of the token reply (`resource_url`, `account`...). */
  extra?: Record<string, unknown>;
  /** Connection data the caller supplied (an import's projectId, accountId, baseUrl, email). */
  data?: Record<string, unknown>;
  name?: string;
}

/** The ChatGPT account id and e-mail of a Codex login, from its id_token (or its JWT access token). */
function codexIdentity(tokens: LoginTokens): Record<string, unknown> {
  for (const token of [tokens.idToken, tokens.accessToken]) {
    const claims = jwtClaims(token);
    const auth = claims?.['https://api.openai.com/auth'] as { chatgpt_account_id?: unknown } | undefined;
    if (typeof auth?.chatgpt_account_id === 'string') {
      return { accountId: auth.chatgpt_account_id, ...(typeof claims?.email === 'string' ? { email: claims.email } : {}) };
    }
  }
  return {};
}

/**
 * The provider's steps after tokens arrive, as its own CLI takes them: Codex reads the account id from
 * the id_token; the Google logins find their Code Assist project; Copilot exchanges the GitHub token for
 * a Copilot token; Qwen keeps its `resource_url` as the API base. Returns the connection's credential,
 * expiry and data.
 */
async function finish(services: Services, def: ProviderDef, tokens: LoginTokens) {
  const data: Record<string, unknown> = { ...tokens.data };
  let accessToken = tokens.accessToken;
  let refreshToken = tokens.refreshToken;
  let expiresAt = tokens.expiresAt;
  const proxy = connectionProxy({ providerSpecificData: data });
  switch (def.id) {
    case 'codex':
      Object.assign(data, { ...codexIdentity(tokens), ...tokens.data });
      break;
    case 'claude-code': {
      const account = tokens.extra?.account as { email_address?: unknown } | undefined;
      if (typeof account?.email_address === 'string') data.email ??= account.email_address;
      break;
    }
    case 'gemini-cli':
    case 'antigravity':
      if (typeof data.projectId !== 'string' && accessToken) {
        data.projectId = await discoverProject(def, oauthEndpoints(def, services.settings.get()).apiBaseUrl, accessToken, proxy);
      }
      break;
    case 'github-copilot': {
      // The GitHub login token (the device flow's access token, or the imported one) is the long-lived
      // credential, kept as the refresh token; the Copilot token is what chat takes.
      refreshToken = accessToken ?? refreshToken;
      const t = await exchangeCopilotToken(def, refreshToken!, endpointOverride(services.settings.get(), def.id)?.apiBaseUrl, proxy);
      accessToken = t.token;
      expiresAt = t.expiresAt;
      if (t.apiBase && typeof tokens.data?.baseUrl !== 'string') data.baseUrl = t.apiBase;
      break;
    }
    case 'qwen-code':
      if (typeof tokens.extra?.resource_url === 'string' && typeof tokens.data?.baseUrl !== 'string') data.baseUrl = resourceBase(tokens.extra.resource_url);
      break;
  }
  return { credential: { accessToken, refreshToken }, expiresAt, data };
}

/** The identity two logins of one account share (so a second login updates the account, not a twin). */
function accountKey(data: Record<string, unknown>): string | undefined {
  const key = data.accountId ?? data.email;
  return typeof key === 'string' && key ? key : undefined;
}

/**
 * Stores a login as a connection (credentials encrypted at rest by the store): a new one, or, when the
 * same account of this provider is already connected, that one with the new tokens, re-activated.
 */
export async function saveLogin(services: Services, def: ProviderDef, tokens: LoginTokens): Promise<{ connection: Connection; created: boolean }> {
  const done = await finish(services, def, tokens);
  const now = new Date().toISOString();
  const data: Record<string, unknown> = { ...done.data, lastRefreshedAt: now };
  const key = accountKey(data);
  const same = key ? services.connections.list().find((c) => c.provider === def.id && accountKey(c.providerSpecificData) === key) : undefined;
  const credential = Object.fromEntries(Object.entries(done.credential).filter(([, v]) => typeof v === 'string'));
  if (same) {
    const connection = await services.connections.update(same.id, {
      authKind: 'oauth',
      credential,
      expiresAt: done.expiresAt,
      providerSpecificData: { ...same.providerSpecificData, ...data },
      isActive: true,
      testStatus: null,
      lastError: null,
    });
    // Gone meanwhile (removed on another node): the login makes a new connection below.
    if (connection) return { connection, created: false };
  }
  const name = tokens.name ?? (typeof data.email === 'string' ? `${def.name}: ${data.email}` : def.name);
  const connection = await services.connections.create({ provider: def.id, name: name.slice(0, 100), authKind: 'oauth', credential, expiresAt: done.expiresAt, providerSpecificData: data });
  return { connection, created: true };
}

/** expires_in seconds of a token reply as an ISO time (null when absent). */
export function expiryFrom(reply: Record<string, unknown>): string | null {
  return typeof reply.expires_in === 'number' ? new Date(Date.now() + reply.expires_in * 1000).toISOString() : null;
}
