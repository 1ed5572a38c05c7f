import { FastResponse } from 'srvx';
import { randomUUID } from 'node:crypto';
import { RouterError } from '../http/errors.js';
import type { RouteContext } from '../http/routes.js';
import { HEADER } from '../../shared/headers.js';
import { getClientCodec, getUpstreamCodec } from '../translate/registry.js';
import type { IrRequest } from '../translate/ir.js';
import { execute, finishOutcome } from './execute.js';
import { postJson } from './json-call.js';
import type { ProxyCall } from './outcome.js';
import { tokenizer } from '../tokenizer.js';
import { joinUrl, type Target } from './target.js';
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

type CountFormat = 'anthropic' | 'gemini';

/** The native count call of a target that speaks the client's format. */
function nativeRequest(format: CountFormat, target: Target, raw: Record<string, unknown>): { url: string; body: string } {
  const url = joinUrl(target.baseUrl, getUpstreamCodec(format).countTokensPath!(target.model));
  if (format === 'anthropic') return { url, body: JSON.stringify({ ...raw, model: target.model }) };
  const { model: _m, ...rest } = raw;
  return { url, body: JSON.stringify(rest) };
}

async function estimate(format: CountFormat, raw: Record<string, unknown>, headers: Headers): Promise<object> {
  const ir =
    format === 'anthropic'
      ? getClientCodec('anthropic').decodeRequest({ max_tokens: 1, ...raw }, headers)
      : getClientCodec('gemini').decodeRequest({ ...raw, stream: false });
  const tokens = await estimateTokens(ir);
  return format === 'anthropic' ? { input_tokens: tokens } : { totalTokens: tokens };
}

function jsonReply(body: string, version: string, traceId: string): Response {
  return new FastResponse(body, { headers: { 'content-type': 'application/json; charset=utf-8', 'x-router-version': version, 'x-router-trace-id': traceId } });
}

/**
 * Token counting, through the executor (scopes, quotas, breakers, cooldowns, usage): native when the target
 * speaks the client's format (Anthropic count_tokens, Gemini countTokens), otherwise estimated with a real
 * tokenizer over the decoded request, without any upstream call.
 */
export async function countTokens(ctx: RouteContext, format: CountFormat, raw: Record<string, unknown>): Promise<Response> {
  const t0 = performance.now();
  const { services } = ctx;
  const traceId = randomUUID();
  const h = ctx.event.req.headers;
  const endpoint = format === 'anthropic' ? '/v1/messages/count_tokens' : '/v1beta/models:countTokens';
  const call: ProxyCall = { clientFormat: format, raw, model: raw.model as string, stream: false, endpoint };
  // Anthropic's beta flags gate body fields (mid-conversation system turns...): the count must see them too.
  const betaFlags = format === 'anthropic' ? h.get('anthropic-beta') : null;
  const beta = betaFlags ? { 'anthropic-beta': betaFlags } : undefined;
  return execute(
    { services, auth: ctx.auth, call, traceId, t0, sessionKey: h.get(HEADER.session) ?? undefined, client: { userAgent: h.get('user-agent'), forwardedFor: h.get('x-forwarded-for') } },
    {
      async prepare(target, outcome) {
        if (target.format === format) return nativeRequest(format, target, raw);
        // Counted here: no upstream is called, so no breaker or cooldown is touched.
        const counted = await estimate(format, raw, h);
        outcome.status = 200;
        outcome.usage = NO_TOKENS;
        finishOutcome(services, outcome, undefined);
        return { early: jsonReply(JSON.stringify(counted), services.version, traceId) };
      },
      async attempt(target, req, outcome, limits) {
        const reply = await postJson(target, req.url, req.body, limits, { maxBytes: 1024 * 1024, headers: beta });
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
