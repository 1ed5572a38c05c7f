import { internalCall, internalChat, type InternalCall } from '../proxy/internal-call.js';
import { clientResults, decodeRerank, encodeRerank, readRerankRequest } from '../families/rerank/dialects.js';
import { rerankSpecOf } from '../families/rerank/index.js';
import { upstreamUrl } from '../proxy/attempt.js';
import { resolveTargets } from '../proxy/resolve.js';
import { joinUrl } from '../providers/target.js';
import type { PipelineDeps } from '../proxy/deps.js';

/**
 * The memory engine's calls to providers (remote embeddings, rerank, summarization and extraction
 * models), through router's own executor (proxy/internal-call.ts): resolved to targets, admitted by
 * breakers and cooldowns, failed over, one usage row each (endpoint `memory:<kind>`), credentials masked.
 */

const TIMEOUT_MS = 30_000;

/** One JSON call of the memory engine: the endpoint kind, the request per target and the reading of the reply. */
type MemoryCall<T> = Omit<InternalCall<T>, 'endpoint'> & { kind: 'embeddings' | 'rerank' | 'chat' };

function errorText(err: unknown): string {
  if (err && typeof err === 'object' && 'message' in err) return String((err as Error).message);
  return String(err);
}

async function run<T>(services: PipelineDeps, spec: MemoryCall<T>): Promise<T> {
  return (await internalCall(services, { ...spec, endpoint: `memory:${spec.kind}` })).value;
}

function decodeVector(v: unknown): Float32Array {
  if (Array.isArray(v)) return Float32Array.from(v as number[]);
  if (typeof v === 'string') {
    const b = Buffer.from(v, 'base64');
    const out = new Float32Array(b.length / 4);
    for (let i = 0; i < out.length; i++) out[i] = b.readFloatLE(i * 4);
    return out;
  }
  throw new Error('embedding reply holds no vector');
}

/** Calls `{base}/embeddings` of the model's provider; returns one vector per input, in input order. */
export async function remoteEmbed(services: PipelineDeps, model: string, texts: string[], dimensions?: number | null): Promise<Float32Array[]> {
  return run(services, {
    kind: 'embeddings',
    model,
    timeoutMs: TIMEOUT_MS,
    request(t) {
      if (!t.provider.endpoints?.embeddings) throw new Error(`provider '${t.provider.id}' has no embeddings endpoint`);
      const body: Record<string, unknown> = { model: t.model, input: texts, encoding_format: 'float' };
      if (dimensions) body.dimensions = dimensions;
      return { url: joinUrl(t.baseUrl, 'embeddings'), body };
    },
    read(reply) {
      const json = reply as { data?: Array<{ index?: number; embedding?: unknown }>; usage?: { prompt_tokens?: number } };
      if (!Array.isArray(json.data) || json.data.length !== texts.length) throw new Error('embedding reply has the wrong number of vectors');
      const sorted = [...json.data].sort((a, b) => (a.index ?? 0) - (b.index ?? 0));
      const usage = typeof json.usage?.prompt_tokens === 'number' ? { inputTokens: json.usage.prompt_tokens, outputTokens: 0 } : undefined;
      return { value: sorted.map((d) => decodeVector(d.embedding)), usage };
    },
  });
}

/** Whether a model resolves to usable targets now (no call made); the reason when not. */
export function modelReachable(services: PipelineDeps, model: string): { ok: true } | { ok: false; reason: string } {
  try {
    resolveTargets(services, model);
    return { ok: true };
  } catch (err) {
    return { ok: false, reason: errorText(err) };
  }
}

/**
 * Reranks through the rerank family's codecs (families/rerank/): the model's provider dialect (Cohere,
 * Jina, Voyage, Together, vLLM/TEI nodes), the executor without a key, a usage row `memory:rerank`;
 * relevance per document index.
 */
export async function remoteRerank(services: PipelineDeps, model: string, query: string, documents: string[], timeoutMs = 10_000): Promise<Array<{ index: number; score: number }>> {
  const req = readRerankRequest({ model, query, documents, top_n: documents.length });
  const result = await internalCall(services, {
    endpoint: 'memory:rerank',
    model,
    timeoutMs,
    request(t) {
      const spec = rerankSpecOf(t);
      return { url: upstreamUrl(t, spec.path), body: encodeRerank(spec.dialect, req, t.model) };
    },
    read(json, t) {
      const reply = decodeRerank(rerankSpecOf(t).dialect, json);
      const value = clientResults(req, reply).map((r) => ({ index: r.index, score: r.relevance_score }));
      return { value, usage: reply.totalTokens !== undefined ? { inputTokens: reply.totalTokens, outputTokens: 0 } : undefined };
    },
  });
  return result.value;
}

/**
 * One non-streamed chat call (system + user text) to a model or combo, in the target's own wire format
 * through the codecs; returns the reply text.
 */
export async function callModel(services: PipelineDeps, model: string, system: string, user: string, maxTokens = 1024): Promise<string> {
  return (await internalChat(services, { endpoint: 'memory:chat', model, system, user, maxTokens, timeoutMs: 120_000 })).value;
}
