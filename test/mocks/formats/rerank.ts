/**
 * The rerank APIs as each provider publishes them, validated as strictly as the real services (a field a
 * service does not know is refused where the service refuses it), with their own error bodies:
 * - Cohere v2 `POST /v2/rerank`: `{model, query, documents: string[], top_n?, max_tokens_per_doc?}` ->
 *   `{id, results: [{index, relevance_score}], meta: {api_version, billed_units: {search_units}}}`;
 *   errors `{id, message}`.
 * - Jina `POST /v1/rerank` (also Together, vLLM): `{model, query, documents (strings or {text}), top_n?,
 *   return_documents? (default true)}` -> `{model, usage: {total_tokens}, results: [{index, document:
 *   {text}, relevance_score}]}`; errors `{detail}` (FastAPI).
 * - Voyage `POST /v1/rerank` (mock path `/voyage/v1/rerank`): `{model, query, documents: string[], top_k?,
 *   return_documents? (default false), truncation?}` -> `{object: "list", data: [{relevance_score, index,
 *   document?}], model, usage: {total_tokens}}`; errors `{detail}`.
 * - Text Embeddings Inference `POST /rerank` (mock path `/tei/rerank`): `{query, texts, raw_scores?,
 *   return_text?, truncate?, truncation_direction?}` -> `[{index, score, text?}]`; errors `{error, error_type}`.
 *
 * Scores are deterministic: the share of the query's words a document contains, so tests know the order.
 */
import type { ErrorReply } from '../errors.js';
import type { Endpoint, MockRequest } from '../types.js';

export type RerankEndpoint = 'cohere.rerank' | 'jina.rerank' | 'voyage.rerank' | 'tei.rerank';

const PATHS: Record<string, RerankEndpoint> = {
  '/v2/rerank': 'cohere.rerank',
  '/v1/rerank': 'jina.rerank',
  '/voyage/v1/rerank': 'voyage.rerank',
  '/tei/rerank': 'tei.rerank',
};

/** The rerank endpoint a POST path names, if any. */
export function rerankEndpoint(method: string, path: string): RerankEndpoint | undefined {
  return method === 'POST' ? PATHS[path] : undefined;
}

export function isRerank(endpoint: Endpoint): endpoint is RerankEndpoint {
  return endpoint.endsWith('.rerank');
}

function words(s: string): string[] {
  return s.toLowerCase().match(/[a-z0-9]+/g) ?? [];
}

/** Relevance of a document to the query: the share of query words it contains, in [0.01, 0.99]. */
export function mockScore(query: string, doc: string): number {
  const q = [...new Set(words(query))];
  const d = new Set(words(doc));
  const hit = q.filter((w) => d.has(w)).length;
  return Math.round((0.01 + (0.98 * hit) / Math.max(1, q.length)) * 10_000) / 10_000;
}

/** Tokens as the mock counts them: words of the query once per document plus the document's words. */
export function mockTokens(query: string, docs: string[]): number {
  const q = words(query).length;
  return docs.reduce((n, d) => n + q + words(d).length, 0);
}

type Problem = { status: number; message: string };

function ranked(query: string, docs: string[], top: number | undefined): Array<{ index: number; score: number }> {
  const all = docs.map((d, index) => ({ index, score: mockScore(query, d) })).sort((a, b) => b.score - a.score || a.index - b.index);
  return top === undefined ? all : all.slice(0, top);
}

function allowOnly(body: Record<string, unknown>, allowed: string[]): string | undefined {
  return Object.keys(body).find((k) => !allowed.includes(k));
}

function stringsOnly(docs: unknown): docs is string[] {
  return Array.isArray(docs) && docs.every((d) => typeof d === 'string');
}

function cohere(req: MockRequest): { status: number; body: unknown } | Problem {
  const b = req.json as Record<string, unknown> | undefined;
  if (!b || typeof b !== 'object') return { status: 400, message: 'invalid request: body must be a JSON object' };
  const unknown = allowOnly(b, ['model', 'query', 'documents', 'top_n', 'max_tokens_per_doc']);
  if (unknown) return { status: 400, message: `invalid request: unknown field: parameter '${unknown}' is not a valid field` };
  if (typeof b.model !== 'string') return { status: 400, message: 'invalid request: model must be specified' };
  if (typeof b.query !== 'string' || !b.query) return { status: 400, message: 'invalid request: query must not be empty' };
  if (!stringsOnly(b.documents) || b.documents.length === 0) return { status: 400, message: 'invalid request: documents must be a non-empty list of strings' };
  if (b.top_n !== undefined && (typeof b.top_n !== 'number' || b.top_n < 1)) return { status: 400, message: 'invalid request: top_n must be a positive integer' };
  const results = ranked(b.query, b.documents, b.top_n as number | undefined).map((r) => ({ index: r.index, relevance_score: r.score }));
  return {
    status: 200,
    body: {
      id: `rr-${req.index}-cohere`,
      results,
      meta: { api_version: { version: '2' }, billed_units: { search_units: Math.ceil(b.documents.length / 100) } },
    },
  };
}

function docText(d: unknown): string | undefined {
  if (typeof d === 'string') return d;
  if (d && typeof d === 'object' && typeof (d as { text?: unknown }).text === 'string') return (d as { text: string }).text;
  return undefined;
}

function jina(req: MockRequest): { status: number; body: unknown } | Problem {
  const b = req.json as Record<string, unknown> | undefined;
  if (!b || typeof b !== 'object') return { status: 422, message: 'Input should be a valid dictionary' };
  for (const f of ['model', 'query', 'documents']) if (b[f] === undefined) return { status: 422, message: `Field required: ${f}` };
  const docs = Array.isArray(b.documents) ? b.documents.map(docText) : [];
  if (docs.length === 0 || docs.some((d) => d === undefined)) return { status: 422, message: 'documents: Input should be a list of strings or {text} objects' };
  const texts = docs as string[];
  const echo = b.return_documents !== false;
  const results = ranked(String(b.query), texts, b.top_n as number | undefined).map((r) => ({
    index: r.index,
    ...(echo ? { document: { text: texts[r.index] } } : {}),
    relevance_score: r.score,
  }));
  return { status: 200, body: { model: b.model, usage: { total_tokens: mockTokens(String(b.query), texts) }, results } };
}

function voyage(req: MockRequest): { status: number; body: unknown } | Problem {
  const b = req.json as Record<string, unknown> | undefined;
  if (!b || typeof b !== 'object') return { status: 400, message: 'Request body must be a JSON object.' };
  const unknown = allowOnly(b, ['model', 'query', 'documents', 'top_k', 'return_documents', 'truncation']);
  if (unknown) return { status: 400, message: `Unexpected argument '${unknown}'.` };
  if (typeof b.model !== 'string' || typeof b.query !== 'string') return { status: 400, message: "'model' and 'query' are required." };
  if (!stringsOnly(b.documents) || b.documents.length === 0) return { status: 400, message: "'documents' must be a non-empty list of strings." };
  const data = ranked(b.query, b.documents, b.top_k as number | undefined).map((r) => ({
    relevance_score: r.score,
    index: r.index,
    ...(b.return_documents === true ? { document: (b.documents as string[])[r.index] } : {}),
  }));
  return { status: 200, body: { object: 'list', data, model: b.model, usage: { total_tokens: mockTokens(b.query, b.documents) } } };
}

function tei(req: MockRequest): { status: number; body: unknown } | Problem {
  const b = req.json as Record<string, unknown> | undefined;
  if (!b || typeof b !== 'object') return { status: 422, message: 'Json deserialize error: invalid type' };
  if (typeof b.query !== 'string') return { status: 422, message: 'Json deserialize error: missing field `query`' };
  if (!stringsOnly(b.texts)) return { status: 422, message: 'Json deserialize error: missing field `texts`' };
  if (b.texts.length === 0) return { status: 422, message: '`texts` cannot be empty' };
  const texts = b.texts;
  return {
    status: 200,
    body: ranked(b.query, texts, undefined).map((r) => ({ index: r.index, score: r.score, ...(b.return_text === true ? { text: texts[r.index] } : {}) })),
  };
}

const SERVERS: Record<RerankEndpoint, (req: MockRequest) => { status: number; body: unknown } | Problem> = {
  'cohere.rerank': cohere,
  'jina.rerank': jina,
  'voyage.rerank': voyage,
  'tei.rerank': tei,
};

/** A provider's own error body for a status. */
export function rerankErrorReply(endpoint: RerankEndpoint, status: number, message?: string, requestIndex = 0): ErrorReply {
  const text =
    message ??
    (status === 401
      ? endpoint === 'cohere.rerank'
        ? 'invalid api token'
        : 'Unauthorized'
      : status === 429
        ? endpoint === 'cohere.rerank'
          ? "You are using a Trial key, which is limited to 10 API calls / minute. You can continue to use the Trial key for free or upgrade to a Production key with higher rate limits at 'https://dashboard.cohere.com/api-keys'."
          : 'Rate limit exceeded'
        : status >= 500
          ? 'Internal server error'
          : `HTTP ${status}`);
  const body =
    endpoint === 'cohere.rerank'
      ? { id: `err-${requestIndex}`, message: text }
      : endpoint === 'tei.rerank'
        ? { error: text, error_type: status === 429 ? 'Overloaded' : status >= 500 ? 'Backend' : 'Validation' }
        : { detail: text };
  return { status, headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) };
}

/** Answers a rerank request as its provider would: a reply, or the provider's own validation error. */
export function rerankReply(req: MockRequest, endpoint: RerankEndpoint): ErrorReply {
  const out = SERVERS[endpoint](req);
  if ('message' in out) return rerankErrorReply(endpoint, out.status, out.message, req.index);
  return { status: 200, headers: { 'content-type': 'application/json' }, body: JSON.stringify(out.body) };
}
