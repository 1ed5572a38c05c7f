import { planTargets } from '../proxy/plan.js';
import { resolveTargets } from '../proxy/resolve.js';
import { chatUrl, encodeOptionsFor, joinUrl, targetHeaders, type Target } from '../proxy/target.js';
import { sendUpstream } from '../proxy/upstream.js';
import { redactSecrets } from '../providers/mask.js';
import type { Services } from '../services.js';
import { getUpstreamCodec } from '../translate/registry.js';
import type { IrRequest } from '../translate/ir.js';

/**
 * The memory engine's calls to providers (remote embeddings, rerank, summarization and extraction
 * models). They take router's own proxy path: the model is resolved to targets exactly as for a client
 * (`<provider>/<model>`, accounts in priority order, node base URLs and headers), the target's credential
 * headers are added, and the next target is tried when one fails.
 */

const TIMEOUT_MS = 30_000;

/** Error text safe to show (credentials of the target masked, one line, bounded). */
function failure(target: Target, status: number, text: string): Error {
  const clean = redactSecrets(text, Object.values(target.credential)).replace(/\s+/g, ' ').slice(0, 300);
  return new Error(`${target.provider.id} answered ${status}: ${clean}`);
}

async function postJson(target: Target, url: string, body: unknown, timeoutMs = TIMEOUT_MS): Promise<unknown> {
  const reply = await sendUpstream({
    url,
    headers: { ...targetHeaders(target, 'application/json'), 'accept-encoding': 'identity' },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(timeoutMs),
  });
  const text = await reply.text(256 * 1024 * 1024);
  if (reply.statusCode >= 400) throw failure(target, reply.statusCode, text);
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new Error(`${target.provider.id} answered with a body that is not JSON`);
  }
}

/** Tries each target in turn; the last error is rethrown when all fail. */
async function eachTarget<T>(targets: readonly Target[], fn: (t: Target) => Promise<T>): Promise<T> {
  let last: unknown = new Error('no target');
  for (const t of targets) {
    try {
      return await fn(t);
    } catch (err) {
      last = err;
    }
  }
  throw last instanceof Error ? last : new Error(String(last));
}

function errorText(err: unknown): string {
  if (err && typeof err === 'object' && 'message' in err) return String((err as Error).message);
  return String(err);
}

/** Targets of a model for an internal call; a RouterError (unknown model, no connection) becomes an Error. */
function targetsOf(services: Services, model: string): readonly Target[] {
  try {
    return resolveTargets(services, model);
  } catch (err) {
    throw new Error(errorText(err));
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
  const targets = targetsOf(services, model);
  const first = targets[0];
  if (first && !first.provider.endpoints?.embeddings) throw new Error(`provider '${first.provider.id}' has no embeddings endpoint`);
  return eachTarget(targets, async (t) => {
    const body: Record<string, unknown> = { model: t.model, input: texts, encoding_format: 'float' };
    if (dimensions) body.dimensions = dimensions;
    const json = (await postJson(t, joinUrl(t.baseUrl, 'embeddings'), body)) as { data?: Array<{ index?: number; embedding?: unknown }> };
    if (!Array.isArray(json.data) || json.data.length !== texts.length) throw new Error('embedding reply has the wrong number of vectors');
    const sorted = [...json.data].sort((a, b) => (a.index ?? 0) - (b.index ?? 0));
    return sorted.map((d) => decodeVector(d.embedding));
  });
}

/** Whether a model resolves to usable targets now (no call made); the reason when not. */
export function modelReachable(services: Services, model: string): { ok: true } | { ok: false; reason: string } {
  try {
    targetsOf(services, model);
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
  const targets = targetsOf(services, model);
  return eachTarget(targets, async (t) => {
    const json = (await postJson(t, joinUrl(t.baseUrl, 'rerank'), { model: t.model, query, documents, top_n: documents.length }, timeoutMs)) as {
      results?: Array<{ index?: number; relevance_score?: number; score?: number }>;
    };
    if (!Array.isArray(json.results)) throw new Error('rerank reply has no results array');
    return json.results
      .filter((r) => Number.isInteger(r.index) && r.index! >= 0 && r.index! < documents.length)
      .map((r) => ({ index: r.index!, score: Number(r.relevance_score ?? r.score ?? 0) }));
  });
}

/**
 * One non-streamed chat call (system + user text) to a model or combo, in the target's own wire format
 * through the codecs; returns the reply text.
 */
export async function callModel(services: Services, model: string, system: string, user: string, maxTokens = 1024): Promise<string> {
  let plan;
  try {
    plan = planTargets(services, model);
  } catch (err) {
    throw new Error(errorText(err));
  }
  if (plan.unavailable) throw new Error(errorText(plan.unavailable));
  return eachTarget(plan.targets, async (t) => {
    const codec = getUpstreamCodec(t.format);
    const ir: IrRequest = {
      model: t.model,
      system: [{ type: 'text', text: system }],
      messages: [{ role: 'user', parts: [{ type: 'text', text: user }] }],
      maxTokens,
      temperature: 0,
      stream: false,
    };
    const json = await postJson(t, chatUrl(t, t.format, false), codec.encodeRequest(ir, encodeOptionsFor(t)), 120_000);
    const res = codec.decodeResponse(json);
    return res.parts
      .filter((p): p is { type: 'text'; text: string } => p.type === 'text')
      .map((p) => p.text)
      .join('');
  });
}
