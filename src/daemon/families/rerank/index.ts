import type { Family, FamilyTarget, Served } from '../family.js';
import { ReplyError } from '../family.js';
import { badField, JSON_TYPE } from '../util.js';
import { clientResults, decodeRerank, encodeRerank, readRerankRequest, type RerankReply, type RerankRequest, type RerankResult, type RerankSpec } from './dialects.js';
import { rerankReply, rerankV2Reply } from './reply.js';

/**
 * POST /v1/rerank and /v2/rerank: the client's Cohere/Jina-shaped request is encoded in each target's
 * dialect (dialects.ts), the reply read back into `{id, model, results, usage}` (or Cohere's v2 shape), and
 * recorded with tokens or search units and their cost.
 */

/**
 * The reply shape a rerank route answers in: `router` (`POST /v1/rerank`: `{id, model, results, usage}`, plus
 * Cohere's `meta` so Cohere's v1 client reads its billed units) or `cohere-v2` (`POST /v2/rerank`, Cohere's
 * v2 API exactly: `{id, results: [{index, relevance_score}], meta: {api_version, billed_units}}`; the
 * `cohere-ai` SDK's `CohereClientV2.rerank` posts `{model, query, documents: string[], top_n?,
 * max_tokens_per_doc?, priority?}` to `{base}/v2/rerank` and reads that reply: cohere-ai 8.1.0
 * api/resources/v2/client/Client.js, serialization/resources/v2/types/V2RerankResponse.js, ApiMeta.js).
 */
export type RerankReplyShape = 'router' | 'cohere-v2';

/** The rerank spec of a target's provider; a provider without one is refused with 400 naming the model. */
export function rerankSpecOf(target: FamilyTarget): RerankSpec {
  const spec = target.provider.rerank;
  if (!spec) throw badField(`Provider '${target.provider.id}' has no rerank endpoint.`, 'model');
  return spec;
}

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

/** Usage and cost of one served rerank: tokens when the upstream counts them, search units priced per unit (Cohere). */
function billing(reply: RerankReply): Pick<Served, 'usage' | 'cost' | 'notes'> {
  const usage = reply.totalTokens !== undefined ? { inputTokens: reply.totalTokens, outputTokens: 0 } : undefined;
  const units = reply.searchUnits;
  if (units === undefined) return { usage };
  return {
    usage: usage ?? { inputTokens: 0, outputTokens: 0 },
    cost: (price) => (price?.perSearchUnit !== undefined ? units * price.perSearchUnit : null),
    notes: { searchUnits: units },
  };
}

/** A dialect's reply read back, checked against the request; a ReplyError (the next target) when it is not that dialect's shape. */
export function readRerankReply(target: FamilyTarget, text: string, req: RerankRequest): { reply: RerankReply; results: RerankResult[] } {
  try {
    const reply = decodeRerank(rerankSpecOf(target).dialect, JSON.parse(text) as unknown);
    return { reply, results: clientResults(req, reply) };
  } catch (err) {
    throw new ReplyError(`${target.provider.id} answered with an unreadable rerank reply: ${(err as Error).message}`);
  }
}

function rerankFamily(name: string, path: string, shape: RerankReplyShape, summary: string): Family<RerankRequest> {
  const reply = shape === 'cohere-v2' ? rerankV2Reply : rerankReply;
  return {
    name,
    route: { path, body: 'json', summary, reply },
    read: ({ json }) => readRerankRequest(json!),
    call: (req) => ({ model: req.raw.model as string, raw: req.raw, stream: false }),
    encode(req, target) {
      const spec = rerankSpecOf(target);
      return { path: spec.path, body: JSON.stringify(encodeRerank(spec.dialect, req, target.model)), contentType: 'application/json', accept: 'application/json' };
    },
    decode([http], req, target, ctx) {
      const { reply, results } = readRerankReply(target, http!.text, req);
      return { body: JSON.stringify(replyBody(shape, reply.id ?? ctx.id, target.publicModel, results, reply, req)), contentType: JSON_TYPE, ...billing(reply) };
    },
    // Rerank upstreams speak no client format of router's: their errors become the standard body.
    errorFormat: () => 'rerank',
  };
}

export const rerank = rerankFamily('rerank', '/v1/rerank', 'router', 'Rerank (Cohere/Jina shape) to Cohere, Jina, Voyage, Together and compatible nodes (vLLM, TEI); docs/rerank.md');
export const rerankV2 = rerankFamily(
  'rerank-v2',
  '/v2/rerank',
  'cohere-v2',
  "Rerank in Cohere's v2 shape (the cohere-ai SDK's CohereClientV2 unmodified), to any rerank model; docs/rerank.md",
);
