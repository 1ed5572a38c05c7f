/**
 * The rerank wire formats router speaks, as pure functions: the client's request (the Cohere/Jina shape)
 * read once into a {@link RerankRequest}, encoded for each upstream dialect, and each dialect's reply read
 * back into one list of scored indexes. No I/O here; the family runner sends and records.
 *
 * Dialects (published API references):
 * - `cohere`: Cohere v2 `POST /v2/rerank` `{model, query, documents: string[], top_n, max_tokens_per_doc}` ->
 *   `{id, results: [{index, relevance_score}], meta: {billed_units: {search_units}}}`; documents never echoed.
 * - `jina`: Jina `POST /v1/rerank`, also Together, vLLM and Infinity `/rerank`: `{model, query, documents
 *   (strings or objects), top_n, return_documents}` -> `{model, results: [{index, relevance_score,
 *   document?}], usage: {total_tokens}}`.
 * - `voyage`: Voyage `POST /v1/rerank` `{model, query, documents: string[], top_k, return_documents,
 *   truncation}` -> `{object: "list", data: [{index, relevance_score, document?}], usage: {total_tokens}}`.
 * - `tei`: Hugging Face Text Embeddings Inference `POST /rerank` `{query, texts, return_text, raw_scores}` ->
 *   `[{index, score, text?}]`, no usage.
 */
import { badField as badRequest } from '../util.js';
import type { RerankDialect, RerankSpec } from '../../providers/types.js';

export type { RerankDialect, RerankSpec };

/** A client document: a string, or an object (`{text}`, Cohere v1 / Together fields, Jina `{image}`). */
export type RerankDocument = string | Record<string, unknown>;

/** The client's request, read once. */
export interface RerankRequest {
  query: string;
  documents: RerankDocument[];
  topN?: number;
  /** undefined: as the upstream does by default (only a `jina`-dialect upstream echoes then). */
  returnDocuments?: boolean;
  /** Cohere `rank_fields`: which fields of object documents are ranked. */
  rankFields?: string[];
  /** Cohere v2 `max_tokens_per_doc`. */
  maxTokensPerDoc?: number;
  /** The client's body as sent (a `jina`-dialect upstream gets its other fields unchanged). */
  raw: Record<string, unknown>;
}

/** One scored document of a reply. */
export interface RerankResult {
  index: number;
  relevance_score: number;
  document?: unknown;
}

/** A dialect's reply read back: results in the upstream's order, what it billed. */
export interface RerankReply {
  id?: string;
  results: RerankResult[];
  totalTokens?: number;
  searchUnits?: number;
}

/** Most documents one request may carry (Cohere's and Jina's published limit is 1,000; Voyage's 1,000). */
export const MAX_DOCUMENTS = 10_000;

function positiveInt(v: unknown, field: string): number | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 1) throw badRequest(`'${field}' must be a positive integer.`, field);
  return v;
}

/** Reads the client's body (Cohere or Jina shape; Voyage's `top_k` accepted as `top_n`); 400 naming the field. */
export function readRerankRequest(raw: Record<string, unknown>): RerankRequest {
  if (typeof raw.model !== 'string' || raw.model === '') throw badRequest("The 'model' field is required.", 'model');
  if (typeof raw.query !== 'string' || raw.query === '') throw badRequest("'query' must be a non-empty string.", 'query');
  const docs = raw.documents;
  if (!Array.isArray(docs) || docs.length === 0) throw badRequest("'documents' must be a non-empty array.", 'documents');
  if (docs.length > MAX_DOCUMENTS) throw badRequest(`'documents' holds more than ${MAX_DOCUMENTS} entries.`, 'documents');
  for (const d of docs) {
    if (typeof d !== 'string' && (typeof d !== 'object' || d === null || Array.isArray(d))) {
      throw badRequest("Each entry of 'documents' must be a string or an object.", 'documents');
    }
  }
  if (raw.return_documents !== undefined && typeof raw.return_documents !== 'boolean') throw badRequest("'return_documents' must be a boolean.", 'return_documents');
  const rankFields = raw.rank_fields;
  if (rankFields !== undefined && (!Array.isArray(rankFields) || !rankFields.every((f) => typeof f === 'string'))) {
    throw badRequest("'rank_fields' must be an array of strings.", 'rank_fields');
  }
  return {
    query: raw.query,
    documents: docs as RerankDocument[],
    topN: positiveInt(raw.top_n, 'top_n') ?? positiveInt(raw.top_k, 'top_k'),
    returnDocuments: raw.return_documents as boolean | undefined,
    rankFields: rankFields as string[] | undefined,
    maxTokensPerDoc: positiveInt(raw.max_tokens_per_doc, 'max_tokens_per_doc'),
    raw,
  };
}

/**
 * A document as text, for dialects that take strings only: a string as is; `{text}` its text; another
 * object as `key: value` lines (the YAML form Cohere recommends for structured documents), limited to
 * `rank_fields` when given. A Jina image document cannot become text: 400.
 */
export function documentText(doc: RerankDocument, rankFields?: string[]): string {
  if (typeof doc === 'string') return doc;
  if (typeof doc.text === 'string' && !rankFields) return doc.text;
  const keys = rankFields ?? Object.keys(doc);
  const lines: string[] = [];
  for (const k of keys) {
    const v = doc[k];
    if (v === undefined) continue;
    lines.push(`${k}: ${typeof v === 'string' ? v : JSON.stringify(v)}`);
  }
  if (lines.length === 0 || (keys.length === 1 && keys[0] === 'image')) {
    throw badRequest('This model takes text documents only: an image document cannot be sent to it.', 'documents');
  }
  return lines.join('\n');
}

/** The request body for one dialect, with the target's model id. */
export function encodeRerank(dialect: RerankDialect, req: RerankRequest, model: string): Record<string, unknown> {
  const texts = (): string[] => req.documents.map((d) => documentText(d, req.rankFields));
  switch (dialect) {
    case 'jina': {
      // The client's own shape: its other fields (Jina `truncation`, Together `rank_fields`) pass through.
      const body: Record<string, unknown> = { ...req.raw, model };
      if (req.topN !== undefined) body.top_n = req.topN;
      delete body.top_k;
      return body;
    }
    case 'cohere': {
      const body: Record<string, unknown> = { model, query: req.query, documents: texts() };
      if (req.topN !== undefined) body.top_n = req.topN;
      if (req.maxTokensPerDoc !== undefined) body.max_tokens_per_doc = req.maxTokensPerDoc;
      return body;
    }
    case 'voyage': {
      const body: Record<string, unknown> = { model, query: req.query, documents: texts() };
      if (req.topN !== undefined) body.top_k = req.topN;
      if (req.returnDocuments) body.return_documents = true;
      return body;
    }
    case 'tei':
      return { query: req.query, texts: texts(), return_text: false, raw_scores: false };
  }
}

function num(v: unknown): number | undefined {
  return typeof v === 'number' && Number.isFinite(v) ? v : undefined;
}

function readResults(list: unknown, scoreField: 'relevance_score' | 'score', docField: 'document' | 'text'): RerankResult[] {
  if (!Array.isArray(list)) throw new Error('the reply holds no result list');
  return list.map((r) => {
    const item = r as Record<string, unknown>;
    const index = item.index;
    const score = num(item[scoreField]);
    if (typeof index !== 'number' || !Number.isInteger(index) || score === undefined) throw new Error('a result has no index or score');
    const out: RerankResult = { index, relevance_score: score };
    if (item[docField] !== undefined && item[docField] !== null) out.document = item[docField];
    return out;
  });
}

/** Reads one dialect's reply; throws a plain Error when the reply is not of that shape. */
export function decodeRerank(dialect: RerankDialect, json: unknown): RerankReply {
  if (dialect === 'tei') return { results: readResults(json, 'score', 'text') };
  if (!json || typeof json !== 'object') throw new Error('the reply is not a JSON object');
  const o = json as Record<string, unknown>;
  const id = typeof o.id === 'string' ? o.id : undefined;
  if (dialect === 'voyage') {
    return { id, results: readResults(o.data, 'relevance_score', 'document'), totalTokens: num((o.usage as Record<string, unknown> | undefined)?.total_tokens) };
  }
  const results = readResults(o.results, 'relevance_score', 'document');
  if (dialect === 'cohere') {
    const billed = (o.meta as { billed_units?: Record<string, unknown> } | undefined)?.billed_units;
    return { id, results, searchUnits: num(billed?.search_units), totalTokens: num(billed?.input_tokens) };
  }
  const usage = o.usage as Record<string, unknown> | undefined;
  return { id, results, totalTokens: num(usage?.total_tokens) ?? num(usage?.prompt_tokens) };
}

/**
 * The client's results: indexes checked against the documents, sorted by score (highest first), cut to
 * `top_n`, and `document` as asked: the client's own document when `return_documents` is true (`{text}`
 * for a string), none when false, the upstream's echo when the client did not say.
 */
export function clientResults(req: RerankRequest, reply: RerankReply): RerankResult[] {
  const seen = new Set<number>();
  const out: RerankResult[] = [];
  for (const r of reply.results) {
    if (r.index < 0 || r.index >= req.documents.length) throw new Error(`a result names document ${r.index}, which was not sent`);
    if (seen.has(r.index)) continue;
    seen.add(r.index);
    const item: RerankResult = { index: r.index, relevance_score: r.relevance_score };
    if (req.returnDocuments === true) {
      const doc = req.documents[r.index]!;
      item.document = typeof doc === 'string' ? { text: doc } : doc;
    } else if (req.returnDocuments === undefined && r.document !== undefined) {
      item.document = typeof r.document === 'string' ? { text: r.document } : r.document;
    }
    out.push(item);
  }
  out.sort((a, b) => b.relevance_score - a.relevance_score || a.index - b.index);
  return req.topN !== undefined ? out.slice(0, req.topN) : out;
}
