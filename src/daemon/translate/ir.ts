/**
 * The internal representation (IR) every API format translates through.
 *
 * A client request is decoded from its wire format into an `IrRequest`, encoded into the upstream's
 * wire format, and the upstream's reply travels back the same way (`IrResponse` for whole replies,
 * `IrStreamEvent`s for streams). With one hub, N client formats and M upstream formats need N + M
 * codecs instead of N x M translators.
 *
 * Conventions every codec follows:
 * - Token counts: `inputTokens` is the whole prompt, cached reads and cache writes included (OpenAI's
 *   `prompt_tokens` semantics); `outputTokens` is the whole completion, reasoning included.
 * - Tool-call arguments are JSON text, kept as the upstream produced them (never re-serialized).
 * - Ids of tool calls are kept stable end to end; a codec generates one only when its source has none.
 */

/**
 * Wire formats router speaks. `openai-completions` (legacy text completions) is a client format and an extra
 * upstream endpoint of providers that keep it, never a provider's main format.
 */
export type WireFormat = 'openai-chat' | 'openai-responses' | 'anthropic' | 'gemini' | 'openai-completions';

/** Anthropic-style prompt-cache marker, carried across formats that have one. */
export interface CacheMarker {
  type: 'ephemeral';
  ttl?: string;
}

export type MediaSource =
  /** `mediaType` is optional: added for Gemini `fileData`, which must name the type of a file URI. */
  | { kind: 'url'; url: string; mediaType?: string }
  | { kind: 'base64'; mediaType: string; data: string }
  | { kind: 'text'; mediaType?: string; text: string }
  | { kind: 'file'; fileId: string };

export interface TextPart {
  type: 'text';
  text: string;
  cache?: CacheMarker;
}
export interface ImagePart {
  type: 'image';
  source: MediaSource;
  detail?: 'auto' | 'low' | 'high';
  cache?: CacheMarker;
}
export interface DocumentPart {
  type: 'document';
  source: MediaSource;
  title?: string;
  filename?: string;
  cache?: CacheMarker;
}
export interface AudioPart {
  type: 'audio';
  data: string;
  format: string;
}
/** The provider family that issued an opaque reasoning signature (util/signature.ts). */
export type SignatureIssuer = 'anthropic' | 'gemini' | 'openai';

export interface ThinkingPart {
  type: 'thinking';
  text: string;
  /** Anthropic `signature` / Gemini `thoughtSignature` / Responses `encrypted_content`; opaque. */
  signature?: string;
  /** Who issued `signature`: upstream encoders send it only to that family. Set by every decoder. */
  issuer?: SignatureIssuer;
}
/** Anthropic's encrypted thinking block: issued by Anthropic, sent to no other family. */
export interface RedactedThinkingPart {
  type: 'redacted_thinking';
  data: string;
}
export interface ToolCallPart {
  type: 'tool_call';
  id: string;
  name: string;
  /** JSON text of the arguments, exactly as produced. */
  arguments: string;
  cache?: CacheMarker;
}
export interface ToolResultPart {
  type: 'tool_result';
  toolCallId: string;
  /** Name of the tool, when the source format carries it (Gemini needs it). */
  name?: string;
  content: Array<TextPart | ImagePart | DocumentPart>;
  isError?: boolean;
  cache?: CacheMarker;
}
/** A refusal from the model (OpenAI `refusal`). */
export interface RefusalPart {
  type: 'refusal';
  text: string;
}

export type IrPart =
  | TextPart
  | ImagePart
  | DocumentPart
  | AudioPart
  | ThinkingPart
  | RedactedThinkingPart
  | ToolCallPart
  | ToolResultPart
  | RefusalPart;

/**
 * One turn of the conversation. Tool results travel in `tool` messages. The system prompt that opens a
 * conversation lives in `IrRequest.system`; a system (or developer) message the client placed later stays a
 * `system` message at its position (text parts only), and each encoder writes it at that place the way its
 * format can (see `util/system.ts`).
 */
export interface IrMessage {
  role: 'user' | 'assistant' | 'tool' | 'system';
  parts: IrPart[];
  name?: string;
  /** A `system` message the client sent as OpenAI's `developer` role (encoders that know the role keep it). */
  developer?: boolean;
}

export interface FunctionTool {
  type: 'function';
  name: string;
  description?: string;
  /** JSON Schema of the parameters. */
  parameters?: Record<string, unknown>;
  strict?: boolean;
  cache?: CacheMarker;
}
/**
 * A provider built-in tool (web search, code execution, computer use...). It is passed through untouched
 * when the upstream speaks the same format; other formats drop it and say so in `IrRequest.dropped`.
 */
export interface BuiltinTool {
  type: 'builtin';
  format: WireFormat;
  raw: Record<string, unknown>;
}
export type IrTool = FunctionTool | BuiltinTool;

export type IrToolChoice = 'auto' | 'none' | 'required' | { name: string };

export type IrResponseFormat =
  | { type: 'text' }
  | { type: 'json_object' }
  | { type: 'json_schema'; name: string; schema: Record<string, unknown>; strict?: boolean; description?: string };

export interface IrReasoning {
  /** OpenAI-style effort. */
  effort?: 'none' | 'minimal' | 'low' | 'medium' | 'high' | 'xhigh';
  /** Anthropic/Gemini-style budget in tokens. */
  budgetTokens?: number;
  /** Explicitly on/off when the source says so. */
  enabled?: boolean;
  /** Ask for reasoning summaries/thoughts in the reply (Responses `summary`, Gemini `includeThoughts`). */
  summary?: 'auto' | 'concise' | 'detailed';
}

export interface IrRequest {
  /** The model id as the upstream should see it (router rewrites it after resolution). */
  model: string;
  system: TextPart[];
  messages: IrMessage[];
  tools?: IrTool[];
  toolChoice?: IrToolChoice;
  parallelToolCalls?: boolean;
  maxTokens?: number;
  temperature?: number;
  topP?: number;
  topK?: number;
  stop?: string[];
  seed?: number;
  frequencyPenalty?: number;
  presencePenalty?: number;
  responseFormat?: IrResponseFormat;
  reasoning?: IrReasoning;
  stream: boolean;
  /** OpenAI `stream_options.include_usage`; other client formats always get usage. */
  includeUsage?: boolean;
  /** End-user id / metadata.user_id. */
  user?: string;
  metadata?: Record<string, string>;
  /** Legacy completions: the raw prompt, and the fields only that format knows. */
  legacy?: { prompt: string; suffix?: string; echo?: boolean; logitBias?: Record<string, number> };
  /** Fields of the client request that could not be expressed in the target format (for logs/debugging). */
  dropped?: string[];
  /**
   * Anthropic beta flags the client asked for (`anthropic-beta` header), in order. The Anthropic upstream
   * codec forwards them and uses the features they enable (mid-conversation system messages...).
   */
  betas?: string[];
  /**
   * Client request fields only the client's own wire format can express (Responses `store`, `include`,
   * `previous_response_id`; Gemini `safetySettings`, `cachedContent`...), keyed by their wire names. The
   * upstream codec of that same `format` merges them into its body; codecs of other formats ignore them.
   * Added for the Responses and Gemini codecs.
   */
  passthrough?: { format: WireFormat; fields: Record<string, unknown> };
}

/** Normalized reasons a reply ended. */
export type IrFinishReason = 'stop' | 'length' | 'tool_calls' | 'content_filter' | 'stop_sequence' | 'pause' | 'error';

/**
 * Token counts of one reply in one convention whatever the provider's (docs/usage.md, "One usage model"):
 * `inputTokens` includes cache reads, cache writes, audio and image input; `outputTokens` includes
 * reasoning, audio and image output. Each codec converts its provider's convention on decode.
 */
export interface IrUsage {
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens?: number;
  /** Cache writes, all durations (5-minute and 1-hour). */
  cacheWriteTokens?: number;
  /** The part of cacheWriteTokens written for one hour (Anthropic `ephemeral_1h_input_tokens`), billed at its own rate. */
  cacheWrite1hTokens?: number;
  reasoningTokens?: number;
  /** Audio input tokens (part of inputTokens). */
  audioInputTokens?: number;
  /** Audio output tokens (part of outputTokens). */
  audioOutputTokens?: number;
  /** Image input tokens (part of inputTokens). */
  imageInputTokens?: number;
  /** Image output tokens (part of outputTokens). */
  imageOutputTokens?: number;
  /** The provider's own charge for the reply in USD, when its reply states one (OpenRouter `usage.cost`). */
  costUsd?: number;
}

export interface IrResponse {
  id: string;
  model: string;
  /** Unix seconds. */
  created?: number;
  /** Assistant output in order: text, thinking, redacted_thinking, tool_call, refusal. */
  parts: IrPart[];
  finishReason: IrFinishReason;
  /** The stop sequence that ended the reply, when known. */
  stopSequence?: string;
  usage?: IrUsage;
}

/**
 * Stream events. `index` numbers the content blocks of the reply in order of appearance (0, 1, 2...);
 * a block is opened by its first event and closed by `block_stop`. Deltas of one block are never
 * reordered; blocks never interleave in the IR (decoders close a block before opening the next, except
 * parallel tool calls, whose deltas carry their own index).
 */
export type IrStreamEvent =
  | { type: 'start'; id: string; model: string; created?: number; usage?: Partial<IrUsage> }
  | { type: 'text_delta'; index: number; text: string }
  | { type: 'refusal_delta'; index: number; text: string }
  | { type: 'thinking_delta'; index: number; text: string }
  | { type: 'thinking_signature'; index: number; signature: string; issuer?: SignatureIssuer }
  | { type: 'redacted_thinking'; index: number; data: string }
  | { type: 'tool_call_start'; index: number; id: string; name: string }
  | { type: 'tool_call_delta'; index: number; argumentsDelta: string }
  | { type: 'block_stop'; index: number }
  | { type: 'usage'; usage: Partial<IrUsage> }
  | { type: 'finish'; finishReason: IrFinishReason; stopSequence?: string; usage?: IrUsage }
  | { type: 'error'; status: number; message: string; errorType?: string; code?: string };

/** An error as the IR carries it (the `error` stream event); client codecs write it in their format. */
export type IrError = Extract<IrStreamEvent, { type: 'error' }>;

/** One server-sent event as read from or written to the wire. */
export interface SseMessage {
  event?: string;
  data: string;
  id?: string;
}
