import { FastResponse } from 'srvx';
import { randomUUID } from 'node:crypto';
import { RouterError } from '../http/errors.js';
import type { RouteContext } from '../http/routes.js';
import { sessionHeader } from '../routing/conversation.js';
import { getClientCodec, getUpstreamCodec } from '../translate/registry.js';
import type { IrRequest, WireFormat } from '../translate/ir.js';
import { nativeBody, nativeHeaders } from './passthrough.js';
import { execute, finishOutcome } from './execute.js';
import { postJson } from './json-call.js';
import type { ProxyCall } from './outcome.js';
import { tokenizer } from '../tokenizer.js';
import { joinUrl, type Target } from '../providers/target.js';
import { attemptErrorResponse } from './upstream-error.js';

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

function jsonReply(body: string, version: string, traceId: string): Response {
  return new FastResponse(body, { headers: { 'content-type': 'application/json; charset=utf-8', 'x-router-version': version, 'x-router-trace-id': traceId } });
}

/**
 * Token counting, through the executor (scopes, quotas, breakers, cooldowns, usage): native when the target
 * speaks the client's format (Anthropic count_tokens, Gemini countTokens), otherwise estimated with a real
 * tokenizer over the decoded request, without any upstream call.
 */
export async function countTokens(ctx: RouteContext, format: WireFormat, endpoint: string, raw: Record<string, unknown>): Promise<Response> {
  const t0 = performance.now();
  const { services } = ctx;
  const counting = getClientCodec(format).countTokens;
  if (!counting) throw new RouterError(500, `Token counting is not defined for '${format}'.`);
  const traceId = randomUUID();
  const h = ctx.event.req.headers;
  const call: ProxyCall = { clientFormat: format, raw, model: raw.model as string, stream: false, endpoint };
  // Anthropic's beta flags gate body fields (mid-conversation system turns...): the count must see them too.
  const headers = nativeHeaders(format, h);
  return execute(
    { services, auth: ctx.auth, call, traceId, t0, sessionKey: sessionHeader(h), client: { userAgent: h.get('user-agent'), forwardedFor: h.get('x-forwarded-for') } },
    {
      async prepare(target, outcome) {
        const native = target.format === format ? nativeRequest(format, target, raw) : undefined;
        if (native) return native;
        // Counted here: no upstream is called, so no breaker or cooldown is touched.
        const tokens = await estimateTokens(counting.decodeRequest(raw, h));
        outcome.status = 200;
        outcome.usage = NO_TOKENS;
        finishOutcome(services, outcome, undefined);
        return { early: jsonReply(JSON.stringify(counting.encodeReply(tokens)), services.version, traceId) };
      },
      async attempt(target, req, outcome, limits) {
        const reply = await postJson(target, req.url, req.body, limits, { maxBytes: 1024 * 1024, headers });
        outcome.status = 200;
        outcome.upstreamMs = reply.upstreamMs;
        outcome.usage = NO_TOKENS;
        finishOutcome(services, outcome, undefined);
        return jsonReply(reply.text, services.version, traceId);
      },
      fail(last) {
        const failure = attemptErrorResponse(last, format, format, services.version, traceId);
        if (failure instanceof RouterError) throw failure;
        return failure;
      },
    },
  );
}
