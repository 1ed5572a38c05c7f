import { randomUUID } from 'node:crypto';
import { execute, finishOutcome, INTERNAL_AUTH, type ExecPolicy } from '../proxy/execute.js';
import { postJson } from '../proxy/json-call.js';
import type { Outcome, ProxyCall } from '../proxy/outcome.js';
import { resolveTargets } from '../proxy/resolve.js';
import { chatUrl, encodeOptionsFor, joinUrl, type Target } from '../proxy/target.js';
import { AttemptError } from '../proxy/upstream-error.js';
import type { Services } from '../services.js';
import { getUpstreamCodec } from '../translate/registry.js';
import type { IrRequest, IrUsage } from '../translate/ir.js';

/**
 * The memory engine's calls to providers (remote embeddings, rerank, summarization and extraction
 * models). They take router's own executor, as a client request does: the model is resolved to targets
 * (`<provider>/<model>`, combos, accounts in priority order), breakers and cooldowns admit them, failures
 * fail over and count, each call writes a usage row (endpoint `memory:<kind>`), and credentials are
 * masked in every error. There is no API key, hence no key scopes or quotas.
 */

const TIMEOUT_MS = 30_000;

/** One JSON call of the memory engine: the endpoint label, the request per target and the reading of the reply. */
interface MemoryCall<T> {
  kind: 'embeddings' | 'rerank' | 'chat';
  model: string;
  timeoutMs: number;
  request(target: Target): { url: string; body: unknown };
  read(json: unknown, target: Target): { value: T; usage?: Partial<IrUsage> };
}

function errorText(err: unknown): string {
  if (err && typeof err === 'object' && 'message' in err) return String((err as Error).message);
  return String(err);
}

/** Runs a memory call through the executor; any failure becomes a plain Error with a safe, one-line message. */
async function run<T>(services: Services, spec: MemoryCall<T>): Promise<T> {
  const call: ProxyCall = { clientFormat: 'openai-chat', raw: {}, model: spec.model, stream: false, endpoint: `memory:${spec.kind}` };
  const policy: ExecPolicy<{ url: string; body: string; provider: string }, T> = {
    prepare(target) {
      const r = spec.request(target);
      return { url: r.url, body: JSON.stringify(r.body), provider: target.provider.id };
    },
    async attempt(target, req, outcome: Outcome, limits) {
      const reply = await postJson(target, req.url, req.body, limits, { maxBytes: 256 * 1024 * 1024 });
      let read: { value: T; usage?: Partial<IrUsage> };
      try {
        read = spec.read(JSON.parse(reply.text) as unknown, target);
      } catch (err) {
        // A reply that is not what the endpoint promises: a broken upstream, worth the next target.
        throw new AttemptError(`${target.provider.id} answered with an unreadable reply: ${errorText(err)}`, 502, 'invalid');
      }
      const { value, usage } = read;
      outcome.status = 200;
      outcome.usage = usage ?? { inputTokens: 0, outputTokens: 0 };
      outcome.upstreamMs = reply.upstreamMs;
      finishOutcome(services, outcome, usage);
      return value;
    },
    fail(last: AttemptError, prepared) {
      throw new Error(`${prepared.provider} answered ${last.status}: ${last.message.replace(/\s+/g, ' ').slice(0, 300)}`);
    },
    targetTimeoutMs: spec.timeoutMs,
  };
  try {
    return await execute({ services, auth: INTERNAL_AUTH, call, traceId: randomUUID(), t0: performance.now() }, policy);
  } catch (err) {
    throw err instanceof Error && err.constructor === Error ? err : new Error(errorText(err));
  }
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
export async function remoteEmbed(services: Services, model: string, texts: string[], dimensions?: number | null): Promise<Float32Array[]> {
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
export function modelReachable(services: Services, model: string): { ok: true } | { ok: false; reason: string } {
  try {
    resolveTargets(services, model);
    return { ok: true };
  } catch (err) {
    return { ok: false, reason: errorText(err) };
  }
}

/**
 * Calls `{base}/rerank` (Cohere/Jina shape: {model, query, documents, top_n} -> results[{index,
 * relevance_score}]); returns relevance per document index.
 */
export async function remoteRerank(services: Services, model: string, query: string, documents: string[], timeoutMs = 10_000): Promise<Array<{ index: number; score: number }>> {
  return run(services, {
    kind: 'rerank',
    model,
    timeoutMs,
    request: (t) => ({ url: joinUrl(t.baseUrl, 'rerank'), body: { model: t.model, query, documents, top_n: documents.length } }),
    read(reply) {
      const json = reply as { results?: Array<{ index?: number; relevance_score?: number; score?: number }> };
      if (!Array.isArray(json.results)) throw new Error('rerank reply has no results array');
      const value = json.results
        .filter((r) => Number.isInteger(r.index) && r.index! >= 0 && r.index! < documents.length)
        .map((r) => ({ index: r.index!, score: Number(r.relevance_score ?? r.score ?? 0) }));
      return { value };
    },
  });
}

/**
 * One non-streamed chat call (system + user text) to a model or combo, in the target's own wire format
 * through the codecs; returns the reply text.
 */
export async function callModel(services: Services, model: string, system: string, user: string, maxTokens = 1024): Promise<string> {
  return run(services, {
    kind: 'chat',
    model,
    timeoutMs: 120_000,
    request(t) {
      const ir: IrRequest = {
        model: t.model,
        system: [{ type: 'text', text: system }],
        messages: [{ role: 'user', parts: [{ type: 'text', text: user }] }],
        maxTokens,
        temperature: 0,
        stream: false,
      };
      return { url: chatUrl(t, t.format, false), body: getUpstreamCodec(t.format).encodeRequest(ir, encodeOptionsFor(t)) };
    },
    read(json, t) {
      const res = getUpstreamCodec(t.format).decodeResponse(json);
      const text = res.parts
        .filter((p): p is { type: 'text'; text: string } => p.type === 'text')
        .map((p) => p.text)
        .join('');
      return { value: text, usage: res.usage };
    },
  });
}
