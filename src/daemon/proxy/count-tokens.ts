import { RouterError } from '../http/errors.js';
import type { RouteContext } from '../http/routes.js';
import { getClientCodec, getUpstreamCodec } from '../translate/registry.js';
import type { IrRequest, WireFormat } from '../translate/ir.js';
import { nativeBody, nativeHeaders } from './passthrough.js';
import { postJson } from './attempt.js';
import { requestEnvelope } from './envelope.js';
import { execute } from './execute.js';
import { Reply } from './reply.js';
import { tokenizer } from '../tokenizer.js';
import { joinUrl, type Target } from '../providers/target.js';

/** Estimates the prompt tokens of an IR request: system, messages and tool definitions. */
export async function estimateTokens(ir: IrRequest): Promise<number> {
  const { encode } = await tokenizer();
  let text = ir.system.map((p) => p.text).join('\n');
  for (const msg of ir.messages) {
    for (const part of msg.parts) {
      if (part.type === 'text' || part.type === 'thinking' || part.type === 'refusal') text += `\n${part.text}`;
      else if (part.type === 'tool_call') text += `\n${part.name} ${part.arguments}`;
      else if (part.type === 'tool_result') text += `\n${part.content.map((c) => (c.type === 'text' ? c.text : '')).join('')}`;
    }
  }
  if (ir.tools?.length) text += `\n${JSON.stringify(ir.tools)}`;
  // A few tokens of per-message framing, as the chat formats add.
  return encode(text).length + 3 * ir.messages.length;
}

/** A count generates nothing and its prompt is not consumed: the row reports zero tokens (nothing to estimate). */
const NO_TOKENS = { inputTokens: 0, outputTokens: 0 };

/** The native count call of a target that speaks the client's format (its codec has the path and body). */
function nativeRequest(format: WireFormat, target: Target, raw: Record<string, unknown>): { url: string; body: string } | undefined {
  const path = getUpstreamCodec(format).countTokensPath?.(target.model);
  return path === undefined ? undefined : { url: joinUrl(target.baseUrl, path), body: JSON.stringify(nativeBody(format, raw, target)) };
}

/**
 * Token counting, through the executor (scopes, quotas, breakers, cooldowns, usage): native when the target
 * speaks the client's format (Anthropic count_tokens, Gemini countTokens), otherwise estimated with a real
 * tokenizer over the decoded request, without any upstream call.
 */
export async function countTokens(ctx: RouteContext, format: WireFormat, endpoint: string, raw: Record<string, unknown>): Promise<Response> {
  const t0 = performance.now();
  const counting = getClientCodec(format).countTokens;
  if (!counting) throw new RouterError(500, `Token counting is not defined for '${format}'.`);
  const h = ctx.event.req.headers;
  const env = requestEnvelope(ctx, { clientFormat: format, raw, model: raw.model as string, stream: false, endpoint }, { t0 });
  const reply = new Reply(env);
  // Anthropic's beta flags gate body fields (mid-conversation system turns...): the count must see them too.
  const headers = nativeHeaders(format, h);
  return execute(env, {
    reply,
    async prepare(target, outcome) {
      const native = target.format === format ? nativeRequest(format, target, raw) : undefined;
      if (native) return native;
      // Counted here: no upstream is called, so no breaker or cooldown is touched.
      const tokens = await estimateTokens(counting.decodeRequest(raw, h));
      return { early: reply.send(outcome, JSON.stringify(counting.encodeReply(tokens)), JSON_TYPE, { upstreamMs: 0, usage: NO_TOKENS }) };
    },
    async attempt(target, req, outcome, limits) {
      const sent = await postJson(target, req.url, req.body, limits, { maxBytes: 1024 * 1024, headers });
      return reply.send(outcome, sent.text, JSON_TYPE, { upstreamMs: sent.upstreamMs, usage: NO_TOKENS });
    },
    fail: (last) => reply.fail(last, format, format),
  });
}

const JSON_TYPE = 'application/json; charset=utf-8';
