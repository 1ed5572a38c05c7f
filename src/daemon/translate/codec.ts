import type { IrError, IrRequest, IrResponse, IrStreamEvent, SseMessage, WireFormat } from './ir.js';

/** Options that make encoders deterministic in tests (ids and clocks are otherwise generated). */
export interface EncodeOptions {
  /** Returns a fresh id with the given prefix (e.g. `chatcmpl-`, `msg_`, `call_`). */
  newId?: (prefix: string) => string;
  /** Unix seconds. */
  now?: () => number;
}

/** Turns a stream of IR events into SSE messages of one client format. Stateful, one per response. */
export interface StreamEncoder {
  /** Encode one IR event; may produce zero or more SSE messages. */
  write(event: IrStreamEvent): SseMessage[];
  /** Called once after the last event; returns trailing messages (e.g. `data: [DONE]`). */
  end(): SseMessage[];
}

/** Turns SSE messages of one upstream format into IR events. Stateful, one per upstream response. */
export interface StreamDecoder {
  push(message: SseMessage): IrStreamEvent[];
  /** Called when the upstream stream ends; may emit closing events or an error event (e.g. empty stream). */
  end(): IrStreamEvent[];
  /**
   * True when skipping this message (not pushing it) cannot change anything but the assembled reply text:
   * a plain text delta with no usage, finish, error, tool call, reasoning or refusal. Same-format streams
   * use it after they commit to forward such messages without parsing them (optional, conservative: when
   * unsure, say false).
   */
  skippable?(message: SseMessage): boolean;
  /** The reply text a skippable message carried (parsed only when it is needed after all). */
  skippedText?(message: SseMessage): string;
  /** Where the stream stands (Responses: the next `sequence_number`), for an error event that must fit in. */
  position?(): StreamPosition;
}

/** The client side of a format: what a client sends us and what it expects back. */
export interface ClientCodec {
  format: WireFormat;
  /**
   * Parses and validates a client body into IR. Throws a 400 CodecError on invalid input. `headers` are the
   * client's request headers, for the formats that read some (Anthropic `anthropic-beta`).
   */
  decodeRequest(body: unknown, headers?: Headers): IrRequest;
  encodeResponse(response: IrResponse, request: IrRequest, options?: EncodeOptions): unknown;
  createStreamEncoder(request: IrRequest, options?: EncodeOptions): StreamEncoder;
  /**
   * An error as this format's clients read one in a whole reply's body (the format's own error vocabulary).
   * `detail`: router's own fields for the error (its `code`, `param`, `provider`, `retry_after`...), put
   * where the format keeps extra detail.
   */
  encodeError(error: IrError, detail?: ErrorDetail): Record<string, unknown>;
  /**
   * The events that end a stream of this format with an error, for a stream router did not encode itself
   * (same-format passthrough); `position` says where that stream stood. Streams router encodes end through
   * their StreamEncoder, which writes the same shapes.
   */
  encodeStreamError(error: IrError, position?: StreamPosition): SseMessage[];
  /**
   * Whether an upstream of this same format reports usage at the end of a stream this client body asked for
   * (Anthropic always does; Chat Completions only with `stream_options.include_usage`). Only then may a
   * same-format stream be forwarded without reading its text for an output estimate.
   */
  usageReported(raw: Record<string, unknown>): boolean;
  /**
   * Token counting in this format (Anthropic `count_tokens`, Gemini `countTokens`), for formats that have it:
   * how to read a count request as IR (to estimate it locally) and how to write the count reply.
   */
  countTokens?: {
    decodeRequest(body: Record<string, unknown>, headers?: Headers): IrRequest;
    encodeReply(tokens: number): Record<string, unknown>;
  };
}

/** Router's own fields of an error beyond its message and type: its `code` and extras such as `param`. */
export type ErrorDetail = Record<string, unknown> & { code?: string };

/** Where a stream stood when it failed: what an error event that must fit into it needs to know. */
export interface StreamPosition {
  /** The reply's id and model as the stream announced them. */
  id?: string;
  model?: string;
  /** The `sequence_number` the next event must carry (Responses streams number every event). */
  nextSequence?: number;
}

/** How the target provider wants a request spelled where servers of one format differ. */
export interface UpstreamEncodeOptions {
  /** Chat Completions' output limit field (default `max_completion_tokens`, OpenAI's own name). */
  tokenLimitField?: 'max_tokens' | 'max_completion_tokens';
  /** False for Chat Completions servers that do not know the `developer` role (all but OpenAI's): `system` then. */
  developerRole?: boolean;
  /** False when the model does not take Chat Completions `reasoning_effort` (gpt-4o-class); it is then left out. */
  reasoningEffort?: boolean;
  /** The model's own output maximum: the limit a Messages request asks for when the client set none. */
  maxOutputTokens?: number;
  /** The Google Cloud project a Code Assist request is billed to (the connection's, found at login). */
  project?: string;
}

/**
 * Formats router only speaks to providers, never accepts from clients: Google's Code Assist envelopes
 * (Gemini CLI, Antigravity) around the Gemini body.
 */
export type UpstreamOnlyFormat = 'gemini-code-assist' | 'antigravity';

/** Every format router can send to a provider: the client formats plus the upstream-only ones. */
export type UpstreamWireFormat = WireFormat | UpstreamOnlyFormat;

/** The upstream side of a format: what we send a provider and how we read its reply. */
export interface UpstreamCodec {
  format: UpstreamWireFormat;
  encodeRequest(request: IrRequest, options?: UpstreamEncodeOptions): Record<string, unknown>;
  /** Headers the encoded request needs beyond the provider's own (Anthropic's beta flags); optional. */
  requestHeaders?(request: IrRequest): Record<string, string>;
  decodeResponse(body: unknown): IrResponse;
  createStreamDecoder(): StreamDecoder;
  /**
   * The path of a generation call under the provider's base URL (`chat/completions`, `messages`,
   * `models/{model}:streamGenerateContent?alt=sse`...).
   */
  path(model: string, stream: boolean): string;
  /** The path of the native token count (`messages/count_tokens`, `models/{model}:countTokens`), when the format has one. */
  countTokensPath?(model: string): string;
  /** The path of the model list under the base URL. */
  modelsPath: string;
  /**
   * The JSON body of the model-list call, for formats whose list (or its stand-in) is a POST method
   * (Code Assist's `loadCodeAssist`); without it the list is a GET. `project` is the connection's.
   */
  modelsBody?(project: string | undefined): Record<string, unknown>;
  /** Reads this format's model-list reply. */
  parseModels(body: unknown): UpstreamModel[];
  /**
   * The error object of a parsed body in this format's error shape (what the format's SDKs read as an API
   * error), else undefined: an HTML page, a cut body or another format's JSON is not.
   */
  readError(parsed: unknown): UpstreamErrorObject | undefined;
  /**
   * The body of a same-format passthrough: the client's body for `model` (the upstream's id). Default: the
   * body with `model` rewritten. Formats override it where the model lives in the path (Gemini) or where only
   * the format's own vendor accepts some fields (`providerId` says who the upstream is).
   */
  nativeBody?(raw: Record<string, unknown>, model: string, providerId: string): Record<string, unknown>;
  /** Client headers a same-format upstream needs (Anthropic's `anthropic-beta` flags), when the format has any. */
  nativeHeaders?(clientHeaders: Headers): Record<string, string> | undefined;
}

/** One model of an upstream's model list. */
export interface UpstreamModel {
  id: string;
  contextLength?: number;
}

/** The fields of an upstream's error object that router reads (the rest is passed on as sent). */
export interface UpstreamErrorObject {
  message: string;
  /** The most specific code: OpenAI `code`, Gemini `status`, Anthropic `type`. */
  code?: string;
  type?: string;
}
