import type { AuthInfo } from '../auth/pipeline.js';
import { replyText } from '../translate/util/reply-text.js';
import { randomUUID } from 'node:crypto';
import { RouterError, publicErrorClass, publicReason } from '../http/errors.js';
import type { PipelineDeps } from './deps.js';
import type { IrMessage, IrRequest, IrResponse, IrTool, IrUsage } from '../translate/ir.js';
import { getUpstreamCodec } from '../translate/registry.js';
import { execute, INTERNAL_AUTH, type ExecPolicy, type ExecRequest } from './execute.js';
import { Reply } from './reply.js';
import { postJson } from './attempt.js';
import type { Outcome, ProxyCall } from './outcome.js';
import { chatUrl, encodeOptionsFor, type Target } from '../providers/target.js';
import { AttemptError } from './upstream-error.js';

/**
 * Router's own calls to providers (the memory engine's embeddings, rerank and models; the model health
 * test). They take the executor as a client request does: the model is resolved to targets
 * (`<provider>/<model>`, combos, accounts in priority order), breakers and cooldowns admit them, failures
 * fail over and count, each call writes a usage row under its own endpoint label, and credentials are
 * masked in every error. There is no API key, hence no key scopes or quotas.
 */

/** One JSON call: the endpoint label of its usage row, the request per target and the reading of the reply. */
export interface InternalCall<T> {
  endpoint: string;
  model: string;
  timeoutMs: number;
  request(target: Target): { url: string; body: unknown };
  read(json: unknown, target: Target): { value: T; usage?: Partial<IrUsage> };
  /**
   * Who the call is made for (default: router itself, no key). A call made on behalf of a caller (an MCP
   * tool, the assistant, an A2A task) passes the caller's identity: its key's model scopes and quotas
   * apply and the usage row names the key.
   */
  auth?: AuthInfo;
  /** With `auth`: the model is router's choice, so the key's model scopes do not restrict it (its quotas still apply). */
  routerChosenModel?: boolean;
}

/** What a served call returns: its value and which target served it. */
export interface InternalResult<T> {
  value: T;
  target: Target;
  traceId: string;
  usage?: Partial<IrUsage>;
  /** Time waiting on the serving upstream, ms. */
  upstreamMs: number;
}

/** A failed internal call, with a message router wrote (safe to show: see http/errors.ts publicReason). */
export class InternalCallError extends Error {
  override name = 'InternalCallError';
}
publicErrorClass(InternalCallError);

function errorText(err: unknown): string {
  if (err && typeof err === 'object' && 'message' in err) return String((err as Error).message);
  return String(err);
}

/** Runs a call through the executor; any failure becomes an InternalCallError with a safe, one-line message. */
export async function internalCall<T>(services: PipelineDeps, spec: InternalCall<T>): Promise<InternalResult<T>> {
  const call: ProxyCall = { clientFormat: 'openai-chat', raw: {}, model: spec.model, stream: false, endpoint: spec.endpoint };
  const traceId = randomUUID();
  const env: ExecRequest = { services, auth: spec.auth ?? INTERNAL_AUTH, call, traceId, t0: performance.now(), routerChosenModel: spec.routerChosenModel };
  const reply = new Reply(env);
  const policy: ExecPolicy<{ url: string; body: string; provider: string }, InternalResult<T>> = {
    prepare(target) {
      const r = spec.request(target);
      return { url: r.url, body: JSON.stringify(r.body), provider: target.provider.id };
    },
    async attempt(target, req, outcome: Outcome, limits) {
      const sent = await postJson(target, req.url, req.body, limits, { maxBytes: 256 * 1024 * 1024 });
      let read: { value: T; usage?: Partial<IrUsage> };
      try {
        read = spec.read(JSON.parse(sent.text) as unknown, target);
      } catch (err) {
        // A reply that is not what the endpoint promises: a broken upstream, worth the next target.
        throw new AttemptError(`${target.provider.id} answered with an unreadable reply: ${errorText(err)}`, 502, 'invalid');
      }
      // A call that reported no usage spent none that is known: zero, never estimated from an empty body.
      reply.record(outcome, { upstreamMs: sent.upstreamMs, usage: read.usage ?? { inputTokens: 0, outputTokens: 0 } });
      return { value: read.value, target, traceId, usage: read.usage, upstreamMs: sent.upstreamMs };
    },
    fail(last: AttemptError, prepared) {
      const provider = services.providers.label(prepared.provider);
      throw Object.assign(new InternalCallError(`${provider} answered ${last.status}: ${last.message.replace(/\s+/g, ' ').slice(0, 300)}`), { provider });
    },
    targetTimeoutMs: spec.timeoutMs,
    reply,
  };
  try {
    return await execute(env, policy);
  } catch (err) {
    // Router's own refusals (unknown model, no connection, open circuits) keep their status; anything else
    // becomes an InternalCallError with a safe, one-line message.
    throw err instanceof RouterError || err instanceof InternalCallError ? err : new InternalCallError(publicReason(err).replace(/\s+/g, ' ').slice(0, 300));
  }
}

/**
 * One non-streamed chat call (system + user text) to a model or combo, in the target's own wire format
 * through the codecs; the value is the reply text.
 */
export async function internalChat(
  services: PipelineDeps,
  opts: { endpoint: string; model: string; system?: string; user: string; maxTokens: number; timeoutMs: number },
): Promise<InternalResult<string>> {
  const { user, ...rest } = opts;
  const served = await internalConverse(services, { ...rest, messages: [{ role: 'user', parts: [{ type: 'text', text: user }] }], temperature: 0 });
  return { ...served, value: replyText(served.value) };
}

/**
 * One non-streamed conversation turn (system, messages, optional function tools) to a model or combo on
 * behalf of `auth`, through the codecs; the value is the decoded reply (text and tool calls).
 */
export function internalConverse(
  services: PipelineDeps,
  opts: {
    endpoint: string;
    model: string;
    auth?: AuthInfo;
    system?: string;
    messages: IrMessage[];
    tools?: IrTool[];
    maxTokens?: number;
    temperature?: number;
    timeoutMs: number;
  },
): Promise<InternalResult<IrResponse>> {
  return internalCall(services, {
    endpoint: opts.endpoint,
    model: opts.model,
    auth: opts.auth,
    timeoutMs: opts.timeoutMs,
    request(t) {
      const ir: IrRequest = {
        model: t.model,
        system: opts.system ? [{ type: 'text', text: opts.system }] : [],
        messages: opts.messages,
        ...(opts.tools?.length ? { tools: opts.tools, toolChoice: 'auto' as const } : {}),
        ...(opts.maxTokens !== undefined ? { maxTokens: opts.maxTokens } : {}),
        ...(opts.temperature !== undefined ? { temperature: opts.temperature } : {}),
        stream: false,
      };
      return { url: chatUrl(t, t.format, false), body: getUpstreamCodec(t.format).encodeRequest(ir, encodeOptionsFor(t)) };
    },
    read(json, t) {
      const res = getUpstreamCodec(t.format).decodeResponse(json);
      return { value: res, usage: res.usage };
    },
  });
}
