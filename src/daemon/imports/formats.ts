/**
 * The credential files of the subscription CLIs, read into one neutral shape. Each parser takes the parsed
 * JSON of one file (or keychain item) and returns the accounts in it, or throws a 400 naming what is missing.
 * Formats (public clients of each CLI):
 * - Claude Code `~/.claude/.credentials.json` and Keychain item "Claude Code-credentials":
 *   `{claudeAiOauth: {accessToken, refreshToken, expiresAt (ms), scopes, subscriptionType}}`.
 * - Codex `~/.codex/auth.json` and Keychain item "Codex Auth":
 *   `{tokens: {id_token, access_token, refresh_token, account_id}, last_refresh}`.
 * - Gemini CLI `~/.gemini/oauth_creds.json` (`{access_token, refresh_token, expiry_date (ms), ...}`) and
 *   Keychain item "gemini-cli-oauth" (`{token: {accessToken, refreshToken, expiresAt (ms)}}`).
 * - Qwen Code `~/.qwen/oauth_creds.json`: `{access_token, refresh_token, expiry_date (ms), resource_url}`.
 * - GitHub Copilot `~/.config/github-copilot/apps.json` / `hosts.json`: `{<host[:app]>: {user, oauth_token}}`.
 * - Antigravity CLI (agy) `~/.gemini/antigravity-cli/antigravity-oauth-token`:
 *   `{token: {access_token, refresh_token, expiry}, auth_method}`; token files exported by other tools put
 *   the same fields at the top level (with `expired`/`expires_at`, `email`, `project_id`).
 */

import { badRequest } from '../http/errors.js';

/** One account read from a credential file, in the fields a connection stores. */
export interface ParsedAccount {
  /** Router provider id the account belongs to. */
  provider: string;
  /** Who it is, as people read it (email, user name), or `default`. */
  label: string;
  accessToken: string;
  refreshToken?: string;
  /** ISO time the access token expires, when the file says. */
  expiresAt?: string;
  /** Non-secret facts kept with the connection (account id, email, plan, project). */
  providerSpecificData: Record<string, unknown>;
}

type Json = Record<string, unknown>;

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const str = (v: unknown): string | undefined => (typeof v === 'string' && v.length > 0 ? v : undefined);

function need(v: unknown, what: string): string {
  const s = str(v);
  if (!s) throw badRequest(`The credential file has no ${what}.`);
  if (s.length > 8192) throw badRequest(`The credential file's ${what} is too long.`);
  return s;
}

/** An expiry as ISO: epoch milliseconds or seconds, or any date string Date understands; undefined if unusable. */
export function toExpiry(v: unknown): string | undefined {
  if (typeof v === 'number' && Number.isFinite(v) && v > 0) return new Date(v < 1e12 ? v * 1000 : v).toISOString();
  if (typeof v === 'string' && v) {
    const t = /^\d+$/.test(v) ? Number(v) : Date.parse(v);
    return Number.isFinite(t) && t > 0 ? toExpiry(t) : undefined;
  }
  return undefined;
}

/** The claims of a JWT (unverified: used only for labels such as the email, never for trust). */
export function jwtClaims(token: string | undefined): Json {
  const part = token?.split('.')[1];
  if (!part) return {};
  try {
    const claims: unknown = JSON.parse(Buffer.from(part, 'base64url').toString('utf8'));
    return isObject(claims) ? claims : {};
  } catch {
    return {};
  }
}

const compact = (o: Json): Json => Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined));

/** Claude Code: `{claudeAiOauth: {...}}`. */
export function parseClaudeCode(doc: unknown): ParsedAccount[] {
  const o = isObject(doc) && isObject(doc.claudeAiOauth) ? doc.claudeAiOauth : undefined;
  if (!o) throw badRequest('Not a Claude Code credential file (no claudeAiOauth).');
  const plan = str(o.subscriptionType);
  return [{
    provider: 'claude-code',
    label: plan ? `claude-${plan}` : 'default',
    accessToken: need(o.accessToken, 'accessToken'),
    refreshToken: str(o.refreshToken),
    expiresAt: toExpiry(o.expiresAt),
    providerSpecificData: compact({ subscriptionType: plan, scopes: Array.isArray(o.scopes) ? o.scopes.filter((s) => typeof s === 'string') : undefined }),
  }];
}

/** Codex: `{tokens: {id_token, access_token, refresh_token, account_id}}`. */
export function parseCodex(doc: unknown): ParsedAccount[] {
  const t = isObject(doc) && isObject(doc.tokens) ? doc.tokens : undefined;
  if (!t) throw badRequest('Not a Codex auth file (no tokens).');
  const claims = jwtClaims(str(t.id_token));
  const auth = isObject(claims['https://api.openai.com/auth']) ? claims['https://api.openai.com/auth'] : {};
  const accountId = str(t.account_id) ?? str(auth.chatgpt_account_id);
  const email = str(claims.email);
  const accessToken = need(t.access_token, 'access_token');
  return [{
    provider: 'codex',
    label: email ?? accountId ?? 'default',
    accessToken,
    refreshToken: str(t.refresh_token),
    expiresAt: toExpiry(jwtClaims(accessToken).exp),
    providerSpecificData: compact({ accountId, email, planType: str(auth.chatgpt_plan_type) }),
  }];
}

/** Gemini CLI `oauth_creds.json` (Google token response + expiry_date) or its keychain item (`{token: {...}}`). */
export function parseGeminiCli(doc: unknown): ParsedAccount[] {
  if (!isObject(doc)) throw badRequest('Not a Gemini CLI credential file.');
  const keychain = isObject(doc.token) ? doc.token : undefined;
  const accessToken = need(keychain ? keychain.accessToken : doc.access_token, 'access_token');
  const email = str(jwtClaims(str(doc.id_token)).email);
  return [{
    provider: 'gemini-cli',
    label: email ?? 'default',
    accessToken,
    refreshToken: str(keychain ? keychain.refreshToken : doc.refresh_token),
    expiresAt: toExpiry(keychain ? keychain.expiresAt : doc.expiry_date),
    providerSpecificData: compact({ email }),
  }];
}

/** Qwen Code `oauth_creds.json`. */
export function parseQwenCode(doc: unknown): ParsedAccount[] {
  if (!isObject(doc)) throw badRequest('Not a Qwen Code credential file.');
  const resourceUrl = str(doc.resource_url);
  return [{
    provider: 'qwen-code',
    label: resourceUrl ?? 'default',
    accessToken: need(doc.access_token, 'access_token'),
    refreshToken: str(doc.refresh_token),
    expiresAt: toExpiry(doc.expiry_date),
    providerSpecificData: compact({ resourceUrl }),
  }];
}

/** GitHub Copilot `apps.json` / `hosts.json`: one GitHub OAuth token per host (and app). */
export function parseGithubCopilot(doc: unknown): ParsedAccount[] {
  if (!isObject(doc)) throw badRequest('Not a GitHub Copilot token file.');
  const out: ParsedAccount[] = [];
  for (const [key, entry] of Object.entries(doc)) {
    if (!isObject(entry) || !str(entry.oauth_token)) continue;
    const user = str(entry.user);
    out.push({
      provider: 'github-copilot',
      label: user ? `${user}@${key.split(':')[0]}` : key,
      accessToken: need(entry.oauth_token, 'oauth_token'),
      providerSpecificData: compact({ githubUser: user, githubHost: key.split(':')[0], githubAppId: str(entry.githubAppId) }),
    });
  }
  if (out.length === 0) throw badRequest('The GitHub Copilot token file has no oauth_token.');
  return out;
}

/** Antigravity (agy) token file: nested `{token: {...}}` as the CLI writes it, or flat as exporters write it. */
export function parseAntigravity(doc: unknown): ParsedAccount[] {
  if (!isObject(doc)) throw badRequest('Not an Antigravity token file (expected a JSON object).');
  const t = isObject(doc.token) ? doc.token : doc;
  const email = str(doc.email) ?? str(t.email) ?? str(jwtClaims(str(t.id_token) ?? str(doc.id_token)).email);
  const projectId = str(doc.project_id) ?? str(t.project_id);
  const expiresAt =
    toExpiry(t.expiry) ?? toExpiry(t.expired) ?? toExpiry(t.expires_at) ?? toExpiry(t.expiry_date) ??
    (typeof t.expires_in === 'number' && typeof t.timestamp === 'number' ? toExpiry(t.timestamp + t.expires_in * 1000) : undefined);
  return [{
    provider: 'antigravity',
    label: email ?? 'default',
    accessToken: need(t.access_token, 'access_token'),
    refreshToken: str(t.refresh_token),
    expiresAt,
    providerSpecificData: compact({ email, projectId, authMethod: str(doc.auth_method) }),
  }];
}
