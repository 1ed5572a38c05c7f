import type { RequestStage, StageContext } from '../proxy/stages.js';
import type { IrRequest, IrResponse } from '../translate/ir.js';
import { cacheKey } from './key.js';
import type { CacheKeyModes } from './key-modes.js';
import { planFor, readDirective, type CachePlan } from './policy.js';
import { currentScope } from './scope.js';

/** Stage order: after every stage that rewrites the request (guardrails, memory, compression), so the key is of the final request. */
export const CACHE_STAGE_ORDER = 900;

/** Response header telling the client whether its reply came from the cache. */
export const CACHE_HEADER = 'x-router-cache';

/** Finish reasons of complete, valid replies; `error`, `content_filter` and `pause` are never stored. */
const CACHEABLE_FINISH = new Set(['stop', 'stop_sequence', 'length', 'tool_calls']);

/**
 * Whether a request may use the cache at all: not when it carries provider built-in tools (web search, code
 * execution...): the upstream runs those itself, and their results depend on when it ran.
 */
export function cacheableRequest(request: IrRequest): boolean {
  return !request.tools?.some((t) => t.type === 'builtin');
}

/**
 * Whether a reply may be stored: complete (a max_tokens truncation is a valid reply and is kept; errors,
 * content-filtered and paused replies are not) and not empty. Replies with function tool calls are stored:
 * the client runs the tools, and their results make the next request, and its key, different.
 */
export function cacheableReply(reply: IrResponse): boolean {
  return CACHEABLE_FINISH.has(reply.finishReason) && reply.parts.some((p) => p.type !== 'text' || p.text.length > 0);
}

/**
 * Where the stage looks replies up and stores them: this node's `ResponseCache` (one machine: synchronous,
 * no promise on the request path) or the cluster's `SharedResponseCache` (Redis; one round trip a lookup).
 */
export interface CacheTier {
  get(key: string, maxAgeMs?: number): IrResponse | undefined | Promise<IrResponse | undefined>;
  set(key: string, provider: string, model: string, reply: IrResponse): boolean;
}

interface Pending extends CachePlan {
  key?: string;
  hit?: boolean;
}

/**
 * The response-cache stage: runs last (after every stage that rewrites the request), looks the request up
 * in `respond` and answers from the cache on a hit (the pipeline re-encodes it, as a stream when the client
 * asked for one), and stores a non-streamed reply in `onComplete`. Adds `x-router-cache: hit|miss`.
 */
export function cacheStage(cache: CacheTier, modes: CacheKeyModes): RequestStage {
  const pending = new WeakMap<StageContext, Pending>();
  return {
    name: 'cache',
    wants(ctx) {
      if (!ctx.services.settings.get().cacheEnabled) return false;
      const scope = currentScope();
      const plan = planFor(modes.get(ctx.auth.key?.id), readDirective(scope?.headers), ctx.call.stream);
      if (!plan) return false;
      pending.set(ctx, { ...plan });
      return true;
    },
    respond(request, ctx) {
      const p = pending.get(ctx);
      if (!p) return undefined;
      if (!cacheableRequest(request)) return undefined;
      p.key = cacheKey(request, ctx.target.provider.id);
      const found = p.read ? cache.get(p.key, p.maxAgeMs) : undefined;
      const answer = (hit: IrResponse | undefined): IrResponse | undefined => {
        ctx.headers[CACHE_HEADER] = hit ? 'hit' : 'miss';
        if (!hit) return undefined;
        // The pipeline's Reply records the hit (no account, no upstream time, zero cost) and stamps its headers.
        p.hit = true;
        ctx.notes.cacheHit = true;
        return hit;
      };
      return found instanceof Promise ? found.then(answer) : answer(found);
    },
    onComplete(_request, response, ctx) {
      const p = pending.get(ctx);
      if (!p?.key || p.hit) return;
      if (p.write && cacheableReply(response)) cache.set(p.key, ctx.target.provider.id, ctx.target.model, response);
    },
  };
}
