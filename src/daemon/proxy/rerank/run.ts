import type { ServerResponse } from 'node:http';
import { randomUUID } from 'node:crypto';
import { FastResponse } from 'srvx';
import { badRequest, RouterError } from '../../http/errors.js';
import type { RouteContext } from '../../http/routes.js';
import { sessionHeader } from '../../routing/conversation.js';
import type { Services } from '../../services.js';
import { execute, finishOutcome } from '../execute.js';
import { internalCall } from '../internal-call.js';
import { postJson } from '../json-call.js';
import type { Outcome, ProxyCall } from '../outcome.js';
import { joinUrl, type Target } from '../../providers/target.js';
import { AttemptError, attemptErrorResponse } from '../upstream-error.js';
import { clientResults, decodeRerank, encodeRerank, readRerankRequest, type RerankReply, type RerankRequest, type RerankResult, type RerankSpec } from './dialects.js';

/**
 * POST /v1/rerank through the executor: the client's Cohere/Jina-shaped request is encoded in each target's
 * dialect (dialects.ts), the reply read back into `{id, model, results, usage}`, and the call recorded like
 * any other (usage row with tokens or search units and their cost, events, request log).
 */

/** The URL of a target's rerank endpoint. */
export function rerankUrl(target: Target, spec: RerankSpec): string {
  if (spec.path.startsWith('/')) return new URL(spec.path, target.baseUrl).toString();
  return joinUrl(target.baseUrl, spec.path);
}

/** The rerank spec of a target's provider; a provider without one is refused with 400 naming the model. */
export function rerankSpecOf(target: Target): RerankSpec {
  const spec = target.provider.rerank;
  if (!spec) throw badRequest(`Provider '${target.provider.id}' has no rerank endpoint.`, 'model');
  return spec;
}

/** Usage and cost of one served rerank: tokens when the upstream counts them, search units priced per unit. */
function settle(services: Services, outcome: Outcome, reply: RerankReply): { inputTokens: number; outputTokens: number } | undefined {
  const usage = reply.totalTokens !== undefined ? { inputTokens: reply.totalTokens, outputTokens: 0 } : undefined;
  if (reply.searchUnits !== undefined) {
    // Cohere bills search units (`perSearchUnit` in the price table: usage/media-prices.ts, or the user's override).
    const price = services.usage.pricing.lookup(outcome.target.provider.id, outcome.target.model)?.perSearchUnit;
    outcome.costUsd = price !== undefined ? reply.searchUnits * price : null;
    outcome.notes = { ...outcome.notes, searchUnits: reply.searchUnits };
    return usage ?? { inputTokens: 0, outputTokens: 0 };
  }
  return usage;
}

/** Reads one dialect's reply, or an AttemptError worth the next target when it is not that dialect's shape. */
function readReply(spec: RerankSpec, target: Target, text: string, req: RerankRequest): { reply: RerankReply; results: RerankResult[] } {
  try {
    const reply = decodeRerank(spec.dialect, JSON.parse(text) as unknown);
    return { reply, results: clientResults(req, reply) };
  } catch (err) {
    throw new AttemptError(`${target.provider.id} answered with an unreadable rerank reply: ${(err as Error).message}`, 502, 'invalid');
  }
}

interface Prepared {
  url: string;
  body: string;
  spec: RerankSpec;
}

/**
 * The reply shape a rerank route answers in: `router` (`POST /v1/rerank`: `{id, model, results, usage}`, plus
 * Cohere's `meta` so Cohere's v1 client reads its billed units) or `cohere-v2` (`POST /v2/rerank`, Cohere's
 * v2 API exactly: `{id, results: [{index, relevance_score}], meta: {api_version, billed_units}}`; the
 * `cohere-ai` SDK's `CohereClientV2.rerank` posts `{model, query, documents: string[], top_n?,
 * max_tokens_per_doc?, priority?}` to `{base}/v2/rerank` and reads that reply: cohere-ai 8.1.0
 * api/resources/v2/client/Client.js, serialization/resources/v2/types/V2RerankResponse.js, ApiMeta.js).
 */
export type RerankReplyShape = 'router' | 'cohere-v2';

/** Cohere's `meta`: the API version the reply follows and what was billed (search units, or tokens). */
function cohereMeta(reply: RerankReply, version: '1' | '2'): Record<string, unknown> {
  const billed: Record<string, number> = {};
  if (reply.searchUnits !== undefined) billed.search_units = reply.searchUnits;
  if (reply.totalTokens !== undefined) billed.input_tokens = reply.totalTokens;
  return { api_version: { version }, billed_units: billed };
}

/** The client's reply body in the route's shape. */
function replyBody(shape: RerankReplyShape, id: string, publicModel: string, results: RerankResult[], reply: RerankReply, req: RerankRequest): Record<string, unknown> {
  if (shape === 'cohere-v2') {
    // Cohere v2 never returns documents; they come back only when the client asked for them.
    const items = results.map((r) => (req.returnDocuments === true ? r : { index: r.index, relevance_score: r.relevance_score }));
    return { id, results: items, meta: cohereMeta(reply, '2') };
  }
  return {
    id,
    model: publicModel,
    results,
    usage: { ...(reply.totalTokens !== undefined ? { total_tokens: reply.totalTokens } : {}), ...(reply.searchUnits !== undefined ? { search_units: reply.searchUnits } : {}) },
    meta: cohereMeta(reply, '1'),
  };
}

/** POST /v1/rerank and /v2/rerank: one client request through the executor (scopes, quotas, breakers, cooldowns, failover, usage). */
export async function runRerank(ctx: RouteContext, raw: Record<string, unknown>, shape: RerankReplyShape = 'router'): Promise<Response> {
  const t0 = performance.now();
  const req = readRerankRequest(raw);
  const { services } = ctx;
  const traceId = randomUUID();
  const h = ctx.event.req.headers;
  const call: ProxyCall = { clientFormat: 'openai-chat', raw, model: raw.model as string, stream: false, endpoint: shape === 'cohere-v2' ? '/v2/rerank' : '/v1/rerank' };
  return execute(
    { services, auth: ctx.auth, call, traceId, t0, sessionKey: sessionHeader(h), client: { userAgent: h.get('user-agent'), forwardedFor: h.get('x-forwarded-for') } },
    {
      prepare(target): Prepared {
        const spec = rerankSpecOf(target);
        return { url: rerankUrl(target, spec), body: JSON.stringify(encodeRerank(spec.dialect, req, target.model)), spec };
      },
      async attempt(target, prepared, outcome, limits) {
        const sink = ctx.event.req.runtime?.node?.res as ServerResponse | undefined;
        const http = await postJson(target, prepared.url, prepared.body, limits, { sink });
        const { reply, results } = readReply(prepared.spec, target, http.text, req);
        const usage = settle(services, outcome, reply);
        outcome.status = 200;
        outcome.usage = usage;
        outcome.upstreamMs = http.upstreamMs;
        finishOutcome(services, outcome, usage);
        const body = replyBody(shape, reply.id ?? traceId, target.publicModel, results, reply, req);
        return new FastResponse(JSON.stringify(body), {
          headers: {
            'content-type': 'application/json; charset=utf-8',
            'server-timing': `router;dur=${(performance.now() - t0 - http.upstreamMs).toFixed(2)}, upstream;dur=${http.upstreamMs.toFixed(2)}`,
            'x-router-version': services.version,
            'x-router-trace-id': traceId,
          },
        });
      },
      fail(last) {
        // Rerank upstreams speak no client format of router's: their errors become the standard body.
        const failure = attemptErrorResponse(last, 'openai-chat', 'rerank', services.version, traceId);
        if (failure instanceof RouterError) throw failure;
        return failure;
      },
    },
  );
}

/**
 * Router's own rerank (the memory engine's), through the same dialects and the executor without a key:
 * relevance per document index, usage row under `endpoint`.
 */
export async function internalRerank(
  services: Services,
  opts: { endpoint: string; model: string; query: string; documents: string[]; timeoutMs: number },
): Promise<Array<{ index: number; score: number }>> {
  const req = readRerankRequest({ model: opts.model, query: opts.query, documents: opts.documents, top_n: opts.documents.length });
  const result = await internalCall(services, {
    endpoint: opts.endpoint,
    model: opts.model,
    timeoutMs: opts.timeoutMs,
    request(t) {
      const spec = rerankSpecOf(t);
      return { url: rerankUrl(t, spec), body: encodeRerank(spec.dialect, req, t.model) };
    },
    read(json, t) {
      const reply = decodeRerank(rerankSpecOf(t).dialect, json);
      const value = clientResults(req, reply).map((r) => ({ index: r.index, score: r.relevance_score }));
      return { value, usage: reply.totalTokens !== undefined ? { inputTokens: reply.totalTokens, outputTokens: 0 } : undefined };
    },
  });
  return result.value;
}
