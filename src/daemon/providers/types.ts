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
  /** Static model list, replaced in the catalog by synced models when those exist. */
  models: ModelInfo[];
  /** How to refresh an OAuth access token (public client of the provider's own CLI). */
  oauth?: OAuthRefreshConfig;
}

/** The rerank wire dialects router speaks (proxy/rerank/dialects.ts). */
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

/** An OAuth 2.0 refresh-token grant: the token endpoint and the public client id to send. */
export interface OAuthRefreshConfig {
  tokenUrl: string;
  clientId: string;
  /** Body encoding the endpoint expects. */
  body: 'json' | 'form';
  scope?: string;
}

/** Bearer-token auth from an API key or an OAuth access token. */
export function bearer(cred: Credential): Record<string, string> {
  const token = cred.accessToken ?? cred.apiKey;
  return token ? { authorization: `Bearer ${token}` } : {};
}
