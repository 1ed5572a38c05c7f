import { FastResponse } from 'srvx';
import type { RouteContext } from '../http/routes.js';
import { getClientCodec } from '../translate/registry.js';
import type { IrRequest } from '../translate/ir.js';
import { resolveTargets } from './resolve.js';
import { joinUrl, targetHeaders, withRequestHeaders } from './target.js';
import { sendUpstream } from './upstream.js';

let tokenizer: Promise<(text: string) => number[]> | undefined;

/** gpt-tokenizer, loaded on first use so an idle daemon does not carry its tables. */
function encoder(): Promise<(text: string) => number[]> {
  tokenizer ??= import('gpt-tokenizer').then((m) => m.encode);
  return tokenizer;
}

/** Estimates the prompt tokens of an IR request: system, messages and tool definitions. */
export async function estimateTokens(ir: IrRequest): Promise<number> {
  const encode = await encoder();
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

/**
 * Token counting: native when the target speaks the client's format (Anthropic count_tokens, Gemini
 * countTokens), otherwise estimated with a real tokenizer over the translated request.
 */
export async function countTokens(ctx: RouteContext, format: 'anthropic' | 'gemini', raw: Record<string, unknown>): Promise<Response | object> {
  const targets = resolveTargets(ctx.services, raw.model);
  const target = targets[0]!;
  if (target.format === format) {
    const url =
      format === 'anthropic' ? joinUrl(target.baseUrl, 'messages/count_tokens') : joinUrl(target.baseUrl, `models/${target.model}:countTokens`);
    const body = format === 'anthropic' ? { ...raw, model: target.model } : (({ model: _m, ...rest }) => rest)(raw);
    const beta = format === 'anthropic' ? ctx.event.req.headers.get('anthropic-beta') : null;
    const headers = withRequestHeaders(targetHeaders(target), beta ? { 'anthropic-beta': beta } : undefined);
    const reply = await sendUpstream({ url, headers, body: JSON.stringify(body) });
    const text = await reply.text(1024 * 1024);
    return new FastResponse(text, {
      status: reply.statusCode,
      headers: { 'content-type': 'application/json; charset=utf-8', 'x-router-version': ctx.services.version },
    });
  }
  const ir =
    format === 'anthropic'
      ? getClientCodec('anthropic').decodeRequest({ max_tokens: 1, ...raw }, ctx.event.req.headers)
      : getClientCodec('gemini').decodeRequest({ ...raw, stream: false });
  const tokens = await estimateTokens(ir);
  return format === 'anthropic' ? { input_tokens: tokens } : { totalTokens: tokens };
}
