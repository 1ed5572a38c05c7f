import type { z } from 'zod';
import type { Price } from '../usage/pricing.js';
import type { ProviderDef } from '../providers/types.js';

/**
 * The endpoint-family contract. A family (embeddings, images, audio, moderation, rerank, ...) is a codec
 * set: pure functions that read the client's request once, write one upstream request per target and read
 * the upstream's reply back into the client's. No I/O here (like translate/): the proxy's family runner
 * (proxy/family-run.ts) builds the request envelope once, runs every family through the one executor
 * (scopes, quotas, plan, breakers, cooldowns, failover) with one `Attempt` per target, and one `Reply`
 * stamps the headers and records the outcome. Adding a family is its folder plus one line in registry.ts.
 */

/** What a codec may know of a target: its provider (endpoints, rerank dialect), model ids and format. */
export interface FamilyTarget {
  provider: Pick<ProviderDef, 'id' | 'endpoints' | 'rerank'>;
  /** The model id the upstream knows. */
  model: string;
  /** The model as the client named it. */
  publicModel: string;
  /** The provider's wire format (`gemini` targets get images translated). */
  format: string;
}

/** A file of a multipart body, held in memory. */
export interface UploadedFile {
  field: string;
  filename: string;
  mimeType: string;
  data: Buffer;
}

/** A parsed multipart/form-data body: its text fields in order (repeated names kept) and its files. */
export interface MultipartBody {
  fields: [string, string][];
  files: UploadedFile[];
}

/** The client's body as the route read it: a JSON object, or a multipart form. */
export type FamilyInput = { json: Record<string, unknown>; form?: undefined } | { form: MultipartBody; json?: undefined };

/**
 * What a family's route answers on success: the route table's reply (proxy/family-routes.ts builds it), so
 * the OpenAPI document and the typed client cover every family.
 */
export interface FamilyReply {
  /** The JSON reply's schema; absent when the reply is never JSON (speech: the audio itself). */
  json?: z.ZodType;
  /** Media types answered instead of JSON (speech's audio; a transcript as plain text, SRT or VTT). */
  media?: readonly string[];
  /** The SSE events answered when the request asks to stream (shown in the OpenAPI document). */
  events?: string;
}

/** The route a family answers on (client tier, POST). */
export interface FamilyRoute {
  path: string;
  summary: string;
  reply: FamilyReply;
  /** `multipart`: uploads (the limits below); `json`: a JSON object under the client-route limit. */
  body: 'json' | 'multipart';
  /** Whole body limit, bytes (multipart; default the route's client limit). */
  bodyBytes?: number;
  /** Largest single file, bytes (multipart; default the body limit). */
  fileBytes?: number;
  /** Most files (multipart). */
  files?: number;
}

/** The call as the executor and the usage row see it. */
export interface FamilyCall {
  model: string;
  /** What the usage row and traces keep of the body (large inputs replaced by their size). */
  raw: Record<string, unknown>;
  stream: boolean;
}

/** One upstream request, as a codec writes it for one target. */
export interface UpstreamAsk {
  /** Joined to the target's base URL; a path starting with `/` is taken from the base URL's origin. */
  path: string;
  body: string | Uint8Array;
  contentType: string;
  accept: string;
  /** The content type a reply is taken to have when the upstream names none (default `application/json`). */
  replyType?: string;
  /**
   * The same request sent this many times at once, their replies decoded together: a provider that
   * answers fewer items per call than asked (Gemini image models: one image a call). Default 1.
   */
  copies?: number;
}

/** One upstream reply read whole. */
export interface UpstreamBody {
  bytes: Uint8Array;
  text: string;
  contentType: string;
}

/** What decoding a reply gives: the client's body and what the usage row records. */
export interface Served {
  body: string | Uint8Array;
  contentType: string;
  usage?: { inputTokens: number; outputTokens: number };
  /** The cost from the model's price (undefined: priced by tokens from `usage`; null: unpriced). */
  cost?: (price: Price | undefined) => number | null;
  notes?: Record<string, unknown>;
  /** The body is an SSE stream (recorded as streamed, sent with no-cache). */
  streamed?: boolean;
}

/** What the end of a reply relayed as it came tells (usage in its last event, bytes sent). */
export type RelayEnd = Omit<Served, 'body' | 'contentType' | 'streamed'>;

/** Ids and clock for decoding, fixed in golden tests. */
export interface DecodeContext {
  /** The request's trace id (a reply id when the upstream names none). */
  id: string;
  /** Unix seconds. */
  now: number;
}

/** A family's codec set. `A` is the client's request as read once. */
export interface Family<A = unknown> {
  name: string;
  route: FamilyRoute;
  /** Reads and checks the client's body; a 400 {@link CodecError} naming the field when it is wrong. */
  read(input: FamilyInput): A;
  call(ask: A): FamilyCall;
  /**
   * The request for one target; a 400 CodecError with code `endpoint_not_supported` refuses this target
   * only (a combo tries its next one).
   */
  encode(ask: A, target: FamilyTarget): UpstreamAsk;
  /** The client's reply from the upstream's (one body per copy); a {@link ReplyError} when it is unreadable. */
  decode(replies: UpstreamBody[], ask: A, target: FamilyTarget, ctx: DecodeContext): Served;
  /** Whether a reply of this content type from this target is relayed to the client as it arrives (audio, SSE events). */
  relay?(ask: A, target: FamilyTarget, contentType: string): boolean;
  /** What a relayed reply's end tells: `tail` is its last 8 KiB (latin1), `bytes` its size. */
  relayEnd?(ask: A, target: FamilyTarget, end: { tail: string; bytes: number }): RelayEnd;
  /** The upstream error vocabulary of a target (translated for the client): default `openai-chat`. */
  errorFormat?(target: FamilyTarget): string;
  /** Per-target timeout when the combo sets none, ms. */
  targetTimeoutMs?: number;
}

/** An upstream reply a codec cannot read: the attempt fails (502) and a combo may try its next target. */
export class ReplyError extends Error {
  constructor(
    message: string,
    readonly reason: 'invalid' | 'empty' = 'invalid',
  ) {
    super(message);
    this.name = 'ReplyError';
  }
}
