import type { IncomingMessage, ServerResponse } from 'node:http';

/** Which upstream API a request was addressed to, decided from method, path and (for `/v1/models`) headers. */
export type Endpoint =
  | 'openai.chat'
  | 'openai.responses'
  | 'openai.completions'
  | 'openai.embeddings'
  | 'openai.models'
  | 'openai.images'
  | 'openai.image_edits'
  | 'openai.speech'
  | 'openai.transcriptions'
  | 'openai.translations'
  | 'openai.moderations'
  | 'anthropic.messages'
  | 'anthropic.count_tokens'
  | 'anthropic.models'
  | 'gemini.generate'
  | 'gemini.stream'
  | 'gemini.models'
  | 'gemini.model'
  | 'cohere.rerank'
  | 'jina.rerank'
  | 'voyage.rerank'
  | 'tei.rerank'
  | 'gemini.predict'
  | 'openai.files'
  | 'openai.batches'
  | 'anthropic.batches'
  | 'unknown';

export type Provider = 'openai' | 'anthropic' | 'gemini';

/** One request as the mock received it; kept in `mock.requests` in arrival order. */
export interface MockRequest {
  /** 0-based position among all requests this mock has received since start or `reset()`. */
  index: number;
  method: string;
  /** Path without the query string, e.g. `/v1/chat/completions`. */
  path: string;
  query: Record<string, string>;
  /** Lower-cased header names; repeated headers joined with `, `. */
  headers: Record<string, string>;
  /** The raw body text ('' when there was none). */
  body: string;
  /** The body parsed as JSON, or undefined when it is not JSON. */
  json: any;
  /** The raw body bytes (binary uploads). */
  bytes: Buffer;
  /** A multipart/form-data body, parsed: text fields (repeated names as arrays) and files. */
  form?: MockForm;
  endpoint: Endpoint;
  provider: Provider;
  /** `json.model`, or the `{model}` segment of a Gemini path. */
  model: string | undefined;
  /** Whether the client asked for a streamed reply (`stream: true`, or Gemini's `:streamGenerateContent`). */
  stream: boolean;
  /** Set when the client closed the connection before the reply was complete (an aborted request). */
  aborted?: boolean;
}

export interface MockForm {
  fields: Record<string, string | string[]>;
  files: { field: string; filename: string; mimeType: string; size: number; data: Buffer }[];
}

/** Override of the deterministic usage numbers a content behavior reports. */
export interface UsageOverride {
  inputTokens?: number;
  outputTokens?: number;
  cachedTokens?: number;
  reasoningTokens?: number;
}

export interface ToolCallSpec {
  name: string;
  /** A JSON string (sent as is) or an object (serialized). */
  arguments: string | Record<string, unknown>;
  /** Defaults to a provider-style id derived from the request index. */
  id?: string;
}

interface ContentBase {
  /** Number of text deltas a streamed reply is split into (default 3). */
  chunks?: number;
  usage?: UsageOverride;
  /** The model the reply names (default: the one asked for), as a provider substituting a model would. */
  model?: string;
  /** Extra reply headers (rate-limit headers such as `x-ratelimit-remaining-requests`). */
  headers?: Record<string, string>;
}

export type Behavior =
  | ({ type: 'text'; text?: string } & ContentBase)
  | ({ type: 'tool-calls'; calls: ToolCallSpec[]; text?: string } & ContentBase)
  | ({ type: 'thinking'; thinking?: string; signature?: string; text?: string } & ContentBase)
  | ({ type: 'max-tokens'; text?: string } & ContentBase)
  | ({ type: 'content-filter' } & ContentBase)
  | { type: 'empty-stream' }
  | {
      type: 'status';
      status: number;
      message?: string;
      /** Provider error type (OpenAI `type`, Anthropic `error.type`, Gemini `status`). */
      errorType?: string;
      /** OpenAI `code`. */
      code?: string | null;
      headers?: Record<string, string>;
      /** Replaces the generated error body entirely (objects are JSON-encoded). */
      body?: string | object;
    }
  | { type: 'delay'; ms: number; then?: Behavior }
  | { type: 'hang' }
  | { type: 'drop-mid-stream'; afterChunks?: number; then?: Behavior }
  /** Sends this many frames of the inner behavior, then nothing more while keeping the connection open. */
  | { type: 'stall-mid-stream'; afterChunks?: number; then?: Behavior }
  | { type: 'garbage'; body?: string }
  | {
      type: 'replay';
      /** Path under test/fixtures/recorded, e.g. `openai/chat-streaming.yaml`. */
      file: string;
      interaction?: number;
      /** Split the body into writes of this many bytes (SSE and JSON alike). */
      chunkBytes?: number;
      chunkDelayMs?: number;
    }
  | { type: 'slow-stream'; intervalMs: number; then?: Behavior }
  | {
      type: 'stream-error';
      /** Content frames sent before the in-stream error (default 2). */
      afterChunks?: number;
      status?: number;
      message?: string;
      errorType?: string;
    }
  | { type: 'custom'; fn: (req: MockRequest, res: ServerResponse, raw: IncomingMessage) => void | Promise<void> };

export type ContentBehavior = Extract<
  Behavior,
  { type: 'text' | 'tool-calls' | 'thinking' | 'max-tokens' | 'content-filter' }
>;

/** Decides a behavior for a request; undefined passes to the next handler, then to the default. */
export type Handler = (req: MockRequest) => Behavior | undefined | Promise<Behavior | undefined>;

export interface MockUpstreamOptions {
  host?: string;
  port?: number;
  /** Reply text of the default behavior. */
  text?: string;
  /** When set, requests must carry this key in their provider's own header, else 401. */
  requireKey?: string;
  /**
   * Status for a wrong Gemini key. The brief asks for 401 (UNAUTHENTICATED); the real API answers
   * 400 INVALID_ARGUMENT with reason API_KEY_INVALID, which 400 reproduces.
   */
  geminiAuthStatus?: 400 | 401;
  models?: Partial<Record<Provider, string[]>>;
  embeddingDimensions?: number;
}

export interface MockUpstream {
  url: string;
  openaiBase: string;
  anthropicBase: string;
  geminiBase: string;
  /** Rerank bases (formats/rerank.ts): Cohere's compatibility base (rerank at the origin's `/v2/rerank`), Jina's `/v1`, Voyage's `/voyage/v1`, TEI's `/tei`. */
  cohereBase: string;
  jinaBase: string;
  voyageBase: string;
  teiBase: string;
  requests: MockRequest[];
  /** The providers' batch APIs (OpenAI Files + Batches, Anthropic Message Batches; test/mocks/batches.ts). */
  batches: import('./batches.js').MockBatchApis;
  /** Adds a handler; later handlers are asked first. Returns a function that removes it. */
  handle(fn: Handler): () => void;
  /** The next request (whatever its endpoint) gets this behavior; queued behaviors go first-in first-out. */
  enqueue(...behaviors: Behavior[]): void;
  /** Forgets handlers, queued behaviors and recorded requests. */
  reset(): void;
  /** Resolves once at least `count` requests have arrived. */
  waitForRequests(count: number, timeoutMs?: number): Promise<MockRequest[]>;
  /** Server-side sockets still open. */
  openConnections(): number;
  /** Destroys every socket (releasing `hang`) and stops listening. */
  close(): Promise<void>;
}
