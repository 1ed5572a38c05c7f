import { randomUUID } from 'node:crypto';
import { arch, release, type } from 'node:os';
import { bearer, type ProviderDef } from '../types.js';

/**
 * The Codex CLI release whose wire this provider reproduces (the version the client test suite pins,
 * test/clients/install.ts). Its requests were captured against a loopback server with a ChatGPT login
 * (`codex exec`, custom provider with `requires_openai_auth`): HTTP `POST {base}/responses` with `accept:
 * text/event-stream`, no `OpenAI-Beta`; the WebSocket handshake to `{base}/responses` adds `OpenAI-Beta:
 * responses_websockets=2026-02-06` (also in codex-rs/codex-api/src/endpoint/responses_websocket.rs).
 */
export const CODEX_CLI_VERSION = '0.169.0';

/** The OS part of Codex's user agent: `(<os> <version>; <arch>)` as codex-rs login/src/auth/default_client.rs builds it. */
function platformPart(): string {
  const os = type() === 'Darwin' ? 'Mac OS' : type() === 'Windows_NT' ? 'Windows' : type();
  const cpu = arch() === 'x64' ? 'x86_64' : arch() === 'arm64' ? 'arm64' : arch();
  return `(${os} ${release()}; ${cpu})`;
}

/** `codex_cli_rs/0.169.0 (Linux 6.8.0; x86_64) unknown`: originator, version, platform, terminal (none known here). */
export const CODEX_USER_AGENT = `codex_cli_rs/${CODEX_CLI_VERSION} ${platformPart()} unknown`;

/** The `OpenAI-Beta` value of the Responses WebSocket handshake (Codex CLI 0.169.0; responses_websocket.rs). */
export const CODEX_WS_BETA = 'responses_websockets=2026-02-06';

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * The conversation id Codex sends as `session-id`, `thread-id` and `x-client-request-id` (one UUID per
 * thread): the client's own when it is Codex (or names one), else `prompt_cache_key` when it is a UUID
 * (Codex sets it to the thread id), else a new one per request.
 */
function conversationId(client: Headers, body: Record<string, unknown>): string {
  for (const name of ['session-id', 'session_id', 'thread-id', 'conversation_id']) {
    const v = client.get(name);
    if (v && v.length <= 200 && /^[\w.:-]+$/.test(v)) return v;
  }
  const key = body.prompt_cache_key;
  if (typeof key === 'string' && UUID_RE.test(key)) return key;
  return randomUUID();
}

/**
 * Codex: ChatGPT-account (Plus/Pro) OAuth tokens on the ChatGPT backend's Responses API, with the Codex
 * CLI's headers: `chatgpt-account-id` (from the login's id_token), `originator: codex_cli_rs`, its user
 * agent, and the thread's `session-id` / `thread-id` / `x-client-request-id`. The backend keeps no
 * responses over HTTP (`store: false` is required) and answers streams only (`stream: true`: a
 * non-streaming client request is sent streaming and reassembled); it speaks the Responses WebSocket
 * transport too (docs/responses-websocket.md, "Upstream WebSocket").
 */
export const codex: ProviderDef = {
  id: 'codex',
  name: 'OpenAI Codex (ChatGPT login)',
  kind: 'oauth',
  format: 'openai-responses',
  baseUrl: 'https://chatgpt.com/backend-api/codex',
  authKinds: ['oauth'],
  authHeaders: bearer,
  headers: { originator: 'codex_cli_rs', 'user-agent': CODEX_USER_AGENT },
  connectionHeaders: (data): Record<string, string> => (typeof data.accountId === 'string' ? { 'chatgpt-account-id': data.accountId } : {}),
  requestHeaders: (client, body) => {
    const id = conversationId(client, body);
    return { 'session-id': id, 'thread-id': id, 'x-client-request-id': id };
  },
  adaptBody: (body) => {
    body.store = false;
    body.stream = true;
    // Older backends answer 400 "Instructions are required" without the field; Codex 0.169.0 sends its
    // prompt as a developer message instead and no instructions, which an empty string matches.
    if (typeof body.instructions !== 'string') body.instructions = '';
  },
  streamOnly: true,
  responsesWebSocket: { path: 'responses', headers: { 'openai-beta': CODEX_WS_BETA } },
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
