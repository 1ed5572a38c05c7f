import type { UpstreamEncodeOptions } from '../../codec.js';
import type { IrMessage, IrRequest } from '../../ir.js';

/** The text of a message's text parts, in order. */
function textOf(message: IrMessage): string {
  return message.parts.flatMap((p) => (p.type === 'text' ? [p.text] : [])).join('');
}

/**
 * The prompt of a legacy completion. A request that came in as a legacy completion holds one user message
 * (its prompt, possibly rewritten by request stages such as guardrails or compression); any other request
 * is flattened to plain text, system first, one block per message.
 */
export function completionPrompt(ir: IrRequest): string {
  const only = ir.messages.length === 1 && ir.messages[0]!.role === 'user' ? ir.messages[0] : undefined;
  if (ir.legacy && only && ir.system.length === 0) return textOf(only);
  const blocks = [...ir.system.map((s) => s.text), ...ir.messages.map(textOf)];
  return blocks.filter((b) => b.length > 0).join('\n\n');
}

/**
 * IR -> `POST /completions` body (OpenAI and the many servers that keep the legacy endpoint: vLLM,
 * llama.cpp, Ollama, Together...). `suffix` and `logit_bias` travel in `legacy`; `echo` is not sent,
 * since the client codec puts the prompt in front of the reply itself. A stream asks for the usage chunk,
 * so usage is counted from the upstream's own figures.
 */
export function encodeCompletionRequest(ir: IrRequest, _options?: UpstreamEncodeOptions): Record<string, unknown> {
  const body: Record<string, unknown> = { model: ir.model, prompt: completionPrompt(ir) };
  if (ir.legacy?.suffix !== undefined) body.suffix = ir.legacy.suffix;
  if (ir.legacy?.logitBias !== undefined) body.logit_bias = ir.legacy.logitBias;
  if (ir.maxTokens !== undefined) body.max_tokens = ir.maxTokens;
  if (ir.temperature !== undefined) body.temperature = ir.temperature;
  if (ir.topP !== undefined) body.top_p = ir.topP;
  if (ir.stop?.length) body.stop = ir.stop;
  if (ir.seed !== undefined) body.seed = ir.seed;
  if (ir.frequencyPenalty !== undefined) body.frequency_penalty = ir.frequencyPenalty;
  if (ir.presencePenalty !== undefined) body.presence_penalty = ir.presencePenalty;
  if (ir.user !== undefined) body.user = ir.user;
  if (ir.stream) {
    body.stream = true;
    body.stream_options = { include_usage: true };
  }
  return body;
}
