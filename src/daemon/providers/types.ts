import type { UpstreamCodec } from '../translate/codec.js';

/** A provider's main wire format; legacy completions is an extra endpoint of some (`endpoints.completions`). */
export type UpstreamFormat = Exclude<UpstreamCodec['format'], 'openai-completions'>;
export type AuthKind = 'api-key' | 'oauth' | 'web-session' | 'none';

/** Decrypted credential of a connection; which fields are set depends on the auth kind. */
export interface Credential {
  apiKey?: string;
  accessToken?: string;
  refreshToken?: string;
  /** Cookie header value for web-session connections. */
  cookie?: string;
}

export interface ModelInfo {
  id: string;
  contextLength?: number;
  /** The most output tokens one reply may have (a translated Anthropic request without a limit asks for it). */
  maxOutputTokens?: number;
  /** Takes Chat Completions `reasoning_effort` (providers/capabilities.ts). */
  reasoning?: boolean;
}

/**
 * A provider family: where it lives, how it authenticates, which wire format it speaks. One small object
 * per provider, registered in `registry.ts`.
 */
export interface ProviderDef {
  id: string;
  name: string;
  kind: 'cloud' | 'local' | 'oauth' | 'web-session';
  /** Wire format of its chat endpoint. */
  format: UpstreamFormat;
  /** Base URL including the version segment (CONTRACT "Base URL convention"). */
  baseUrl: string;
  authKinds: AuthKind[];
  /** Headers that carry the credential. */
  authHeaders: (cred: Credential) => Record<string, string>;
  /** Fixed headers every request to this provider carries. */
  headers?: Record<string, string>;
  /** Other names accepted as the provider part of a model id. */
  aliases?: string[];
  /**
   * Which OpenAI-style endpoints beyond chat it serves natively. The media ones (docs/images.md,
   * docs/audio.md, docs/moderation.md): `images` (`/images/generations`; for a Gemini-format provider,
   * translated to `generateContent` / Imagen `:predict`), `imageEdits` (`/images/edits`, multipart),
   * `speech` (`/audio/speech`), `transcriptions` and `translations` (`/audio/*`, multipart), `moderations`.
   */
  endpoints?: ProviderEndpoints;
  /** Where and in which dialect it serves rerank (`POST /v1/rerank`; docs/rerank.md); absent: no rerank. */
  rerank?: RerankSpec;
  /** False for providers that reject tools (spec: tools to a no-tool provider are refused with 400). Default true. */
  supportsTools?: boolean;
  /**
   * Name of the output-token limit in Chat Completions requests router translates for this provider.
   * Default `max_tokens`, which every OpenAI-compatible server accepts (several reject the newer name);
   * OpenAI itself takes `max_completion_tokens` (its reasoning models refuse `max_tokens`).
   */
  chatTokenLimit?: 'max_tokens' | 'max_completion_tokens';
  /**
   * Without `chatTokenLimit`: choose the field by model (provider nodes' `auto`): `max_completion_tokens`
   * for OpenAI reasoning models, which refuse `max_tokens` wherever they are served.
   */
  chatTokenLimitByModel?: boolean;
  /** Static model list, replaced in the catalog by synced models when those exist. */
  models: ModelInfo[];
  /** A provider from the model catalog's data: its models are the catalog's (ProviderDirectory.models). */
  catalogModels?: boolean;
  /** How to log in and refresh an OAuth access token (the public client of the provider's own CLI). */
  oauth?: OAuthConfig;
  /** The API base a connection's stored data names (Qwen's `resourceUrl`), below its own `baseUrl`. */
  connectionBaseUrl?: (data: Record<string, unknown>) => string | undefined;
  /** Headers a connection's stored data adds (Codex `chatgpt-account-id`); built once per target. */
  connectionHeaders?: (data: Record<string, unknown>) => Record<string, string>;
  /**
   * Adjusts the request body just before it is sent, natively passed through or translated alike (Claude
   * Code's identity prompt, Codex's required `store: false`). Mutates `body`; absent for most providers.
   */
  adaptBody?: (body: Record<string, unknown>) => void;
  /**
   * Headers of one request, from the client's headers and the body being sent (Codex's `session-id` /
   * `thread-id`, the client's own thread when it is Codex). Absent for most providers.
   */
  requestHeaders?: (client: Headers, body: Record<string, unknown>) => Record<string, string>;
  /**
   * The chat endpoint answers streams only (the ChatGPT Codex backend: 400 "Stream must be set to true"):
   * a non-streaming client request is sent streaming (`adaptBody` sets `stream`) and the stream is
   * reassembled into the client's non-streaming reply.
   */
  streamOnly?: boolean;
  /**
   * The Responses WebSocket transport of this provider (docs/responses-websocket.md, "Upstream WebSocket"):
   * the path below the base URL (ws:// or wss:// for http:// or https://) and the handshake's own headers.
   */
  responsesWebSocket?: { path: string; headers: Record<string, string> };
}

/** The rerank wire dialects router speaks (families/rerank/dialects.ts). */
export type RerankDialect = 'cohere' | 'jina' | 'voyage' | 'tei';

/** Where and how a provider serves rerank. */
export interface RerankSpec {
  dialect: RerankDialect;
  /** Path joined to the base URL; one starting with `/` is taken from the base URL's origin (Cohere's `/v2/rerank`). */
  path: string;
}

/** The endpoints beyond chat a provider serves (ProviderDef.endpoints). */
export interface ProviderEndpoints {
  responses?: boolean;
  completions?: boolean;
  embeddings?: boolean;
  models?: boolean;
  images?: boolean;
  imageEdits?: boolean;
  speech?: boolean;
  transcriptions?: boolean;
  translations?: boolean;
  moderations?: boolean;
}

/**
 * A provider's OAuth client: the login flows it offers and how its tokens are refreshed. Every URL can be
 * overridden by the `oauthEndpoints` setting (tests, private deployments); see src/daemon/oauth/.
 */
export interface OAuthConfig {
  /** The token endpoint: code exchange, device-code polling and refresh. */
  tokenUrl: string;
  clientId: string;
  /** Installed-app secret (Google's clients publish theirs; it is not a secret there). */
  clientSecret?: string;
  /** Body encoding of refresh requests. */
  body: 'json' | 'form';
  /** Body encoding of the authorization-code exchange (default: `body`). */
  exchangeBody?: 'json' | 'form';
  /** The exchange carries the login's `state` too (Anthropic's token endpoint asks for it). */
  exchangeState?: boolean;
  /** Scope sent with a refresh, when the provider wants one. */
  scope?: string;
  /** Browser login (PKCE S256): the authorization endpoint and the scope asked for there. */
  authorizeUrl?: string;
  authScope?: string;
  /** Extra query parameters of the authorization URL. */
  authParams?: Record<string, string>;
  /** The loopback redirect the provider registered for its CLI: port, path and host name in the URI. */
  redirect?: { port: number; path: string; host?: string };
  /** A redirect URI on the provider's site that shows the code for pasting (Claude's console page). */
  pasteRedirectUri?: string;
  /** Device flow (RFC 8628): the device authorization endpoint, its scope, and whether it takes PKCE. */
  deviceAuthorizationUrl?: string;
  deviceScope?: string;
  devicePkce?: boolean;
  /** How tokens are renewed: the refresh-token grant (default) or Copilot's token exchange. */
  refresh?: 'refresh_token' | 'copilot-exchange';
  /** Browser flows retired by the provider: only import-token remains (410 on the others). */
  retired?: boolean;
}

/** Bearer-token auth from an API key or an OAuth access token. */
export function bearer(cred: Credential): Record<string, string> {
  const token = cred.accessToken ?? cred.apiKey;
  return token ? { authorization: `Bearer ${token}` } : {};
}
