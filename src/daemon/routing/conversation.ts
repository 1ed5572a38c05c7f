/**
 * Cache affinity (issue 30 item 1, CONTRACT "Routing beyond failover"): a conversation stays on the account
 * and combo target that served it while they stay healthy, so the provider's prompt cache (kept per
 * account) is hit again. This module names a conversation from a request and remembers where each one went.
 *
 * A conversation is identified by, in order: the `X-Router-Session-Id` (or older `X-Router-Session`)
 * header; the client's own markers: Codex's `session_id` / `conversation_id` headers, Anthropic
 * `metadata.user_id`, a Responses `previous_response_id` chain, `prompt_cache_key`; else, in `prefix` mode
 * only, a hash of the request's first system and user content. Nothing is computed for a combo whose
 * affinity is off.
 */
import { createHash } from 'node:crypto';
import { HEADER } from '../../shared/headers.js';
import { type Clock, systemClock } from './clock.js';
import { LruMap } from './lru.js';
import { SessionAffinity } from './session-affinity.js';

/** The affinity modes that do something (`off` never reaches this module). */
export type AffinityMode = 'session' | 'prefix';

/** Reads one request header (a `Headers` object fits). */
export interface HeaderGetter {
  get(name: string): string | null;
}

/** Longest conversation id kept; longer client values are cut (they are ids, not content). */
const MAX_ID = 200;

/** Codex CLI's own session headers (both spellings seen in the wild). */
const CLIENT_SESSION_HEADERS = ['session_id', 'session-id', 'conversation_id', 'conversation-id'] as const;

const clip = (s: string) => (s.length > MAX_ID ? s.slice(0, MAX_ID) : s);

/** The router's own session headers: `X-Router-Session-Id`, else the older `X-Router-Session`. */
export function sessionHeader(headers: HeaderGetter): string | undefined {
  const v = headers.get(HEADER.sessionId) ?? headers.get(HEADER.session);
  return v ? clip(v) : undefined;
}

/**
 * The conversation a request belongs to, or undefined when it carries no marker (and, in `prefix` mode, no
 * system or user content). Ids from client markers are prefixed with where they came from, so two kinds
 * never collide: `codex:`, `user:`, `resp:` (a chain's first response), `cache:` (prompt_cache_key),
 * `prefix:`. Router's own header is taken as is (it is what `GET /api/sessions` lists).
 */
export function conversationOf(
  mode: AffinityMode,
  headers: HeaderGetter | undefined,
  body: Record<string, unknown>,
  chains: ResponseChains,
): string | undefined {
  if (headers) {
    const own = sessionHeader(headers);
    if (own) return own;
    for (const name of CLIENT_SESSION_HEADERS) {
      const v = headers.get(name);
      if (v) return `codex:${clip(v)}`;
    }
  }
  const metadata = body.metadata;
  if (isRecord(metadata) && typeof metadata.user_id === 'string' && metadata.user_id) return `user:${clip(metadata.user_id)}`;
  const previous = body.previous_response_id;
  if (typeof previous === 'string' && previous) return chains.conversationOf(previous) ?? `resp:${clip(previous)}`;
  const cacheKey = body.prompt_cache_key;
  if (typeof cacheKey === 'string' && cacheKey) return `cache:${clip(cacheKey)}`;
  return mode === 'prefix' ? prefixId(body) : undefined;
}

/**
 * `prefix:` and a hash of the first system content and the first user content, whatever the client format
 * (Chat Completions and Messages `messages`, Anthropic `system`, Responses `instructions` + `input`, Gemini
 * `systemInstruction` + `contents`). Two requests that begin alike are one conversation: they share the
 * provider's cache prefix, which is what affinity is for.
 */
export function prefixId(body: Record<string, unknown>): string | undefined {
  let system: unknown = body.system ?? body.instructions ?? body.systemInstruction ?? body.system_instruction;
  let user: unknown;
  const list = Array.isArray(body.messages) ? body.messages : Array.isArray(body.contents) ? body.contents : Array.isArray(body.input) ? body.input : undefined;
  if (typeof body.input === 'string') user = body.input;
  else if (list) {
    for (const m of list) {
      if (!isRecord(m)) continue;
      const role = m.role;
      if (system === undefined && (role === 'system' || role === 'developer')) system = m.content;
      else if (role === 'user' || (role === undefined && user === undefined && m.type !== 'function_call_output')) {
        user = m.content ?? m.parts;
        break;
      }
    }
  }
  if (system === undefined && user === undefined) return undefined;
  const hash = createHash('sha256').update(JSON.stringify([system ?? null, user ?? null])).digest('base64url');
  return `prefix:${hash.slice(0, 22)}`;
}

/**
 * Responses `previous_response_id` chains: the conversation of each response served under affinity, so the
 * next turn (which names that response) is the same conversation. Bounded LRU.
 */
export class ResponseChains {
  private readonly map: LruMap<string, string>;

  constructor(maxEntries = 20_000) {
    this.map = new LruMap(maxEntries);
  }

  conversationOf(responseId: string): string | undefined {
    return this.map.get(responseId);
  }

  note(responseId: string, conversation: string): void {
    this.map.set(responseId, conversation);
  }
}

/**
 * Where each conversation of a combo went last: the target (`<provider>/<model>` as the client named it)
 * and the account. Bounded LRU with a sliding TTL (one hour unused: forgotten), O(1) per request.
 */
/** A binding change other nodes of a cluster must learn (hot/shared-routing.ts). */
export type AffinityChange =
  | { type: 'bind'; comboId: string; conversation: string; target: string }
  | { type: 'release'; comboId: string; conversation: string }
  | { type: 'chain'; responseId: string; conversation: string };

export class ConversationAffinity {
  readonly chains = new ResponseChains();
  private readonly bindings: SessionAffinity;
  /** Told of new or moved bindings (cluster mode only; a refresh of the same binding tells nobody). */
  listener?: (change: AffinityChange) => void;

  constructor(options: { maxEntries?: number; ttlMs?: number; now?: Clock } = {}) {
    this.bindings = new SessionAffinity({ maxEntries: options.maxEntries ?? 20_000, ttlMs: options.ttlMs, now: options.now ?? systemClock });
  }

  /** The target key a conversation of `comboId` is bound to, if the binding is fresh. */
  bound(comboId: string, conversation: string): string | undefined {
    return this.bindings.get(comboId, conversation);
  }

  bind(comboId: string, conversation: string, target: { publicModel: string; connectionId?: string }): void {
    const key = targetKey(target);
    if (this.listener && this.bindings.get(comboId, conversation) !== key) this.listener({ type: 'bind', comboId, conversation, target: key });
    this.bindings.bind(comboId, conversation, key);
  }

  /** A change another node made: applied without telling the listener. */
  applyRemote(change: AffinityChange): void {
    if (change.type === 'bind') this.bindings.bind(change.comboId, change.conversation, change.target);
    else if (change.type === 'release') this.bindings.release(change.comboId, change.conversation);
    else this.chains.note(change.responseId, change.conversation);
  }

  /**
   * A Responses reply served through a combo with affinity: its id joins the request's conversation, so
   * the turn that names it as `previous_response_id` is the same conversation. A request that had none
   * starts one named after this response, bound here to the target that served it (a stored response
   * lives with the account that made it). Returns the conversation.
   */
  noteResponse(comboId: string, responseId: string, conversation: string | undefined, target: { publicModel: string; connectionId?: string }): string {
    const conv = conversation ?? `resp:${clip(responseId)}`;
    this.chains.note(responseId, conv);
    this.listener?.({ type: 'chain', responseId, conversation: conv });
    if (conversation === undefined) this.bind(comboId, conv, target);
    return conv;
  }

  release(comboId: string, conversation: string): void {
    this.bindings.release(comboId, conversation);
    this.listener?.({ type: 'release', comboId, conversation });
  }

  get size(): number {
    return this.bindings.size;
  }
}

/** A target as bindings name it: the public model and the account (none for a no-auth provider). */
export function targetKey(target: { publicModel: string; connectionId?: string }): string {
  return `${target.publicModel}\u0000${target.connectionId ?? ''}`;
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
