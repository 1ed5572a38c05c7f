/**
 * Refusals the real provider APIs make and the plain mock does not: opt in with
 * `mock.handle(strictUpstream(mock))` (add it last, so it is asked first). Each rule is one the real API
 * enforces with a 400 in its own error format, found by driving the real coding agents through router:
 *
 * - Anthropic: a `thinking` / `redacted_thinking` block must carry a signature Anthropic issued (here: one
 *   the mock issued; a Gemini `thoughtSignature` such as `skip_thought_signature_validator` is not one).
 * - Anthropic: `temperature` and `top_p` together are refused by the current models ("cannot both be
 *   specified for this model").
 * - OpenAI: `reasoning_effort` (Chat Completions) or `reasoning` (Responses) sent to a model without
 *   reasoning (gpt-4o, gpt-4.1, gpt-3.5 families) is an unsupported parameter.
 *
 * (A `role: system` message inside `messages` is not refused: Claude Code 2.1 sends one with only the
 * `mid-conversation-tool-changes` beta, and the real API accepts that request.)
 */
import { DEFAULT_SIGNATURE } from './reply.js';
import type { Behavior, MockRequest } from './types.js';

function invalid(message: string): Behavior {
  return { type: 'status', status: 400, errorType: 'invalid_request_error', message };
}

/** The first rule of the real Anthropic Messages API this request breaks, as the API's own 400. */
export function anthropicRefusal(req: MockRequest, issued: ReadonlySet<string>): Behavior | undefined {
  if (req.endpoint !== 'anthropic.messages' && req.endpoint !== 'anthropic.count_tokens') return undefined;
  const body = req.json ?? {};
  const messages: any[] = Array.isArray(body.messages) ? body.messages : [];
  for (const [i, m] of messages.entries()) {
    if (!Array.isArray(m?.content)) continue;
    for (const [j, block] of m.content.entries()) {
      if (block?.type === 'thinking' && !issued.has(block.signature)) {
        return invalid(`messages.${i}.content.${j}: Invalid \`signature\` in \`thinking\` block`);
      }
      if (block?.type === 'redacted_thinking' && !issued.has(block.data)) {
        return invalid(`messages.${i}.content.${j}: Invalid \`data\` in \`redacted_thinking\` block`);
      }
    }
  }
  if (req.endpoint === 'anthropic.messages' && body.temperature != null && body.top_p != null) {
    return invalid('`temperature` and `top_p` cannot both be specified for this model. Please use only one.');
  }
  return undefined;
}

const NON_REASONING = /^(gpt-4o|gpt-4\.1|gpt-4-|gpt-3\.5|chatgpt-4o)/;

/** The OpenAI API's refusal of reasoning parameters for a model without reasoning. */
export function openaiRefusal(req: MockRequest): Behavior | undefined {
  if (req.endpoint !== 'openai.chat' && req.endpoint !== 'openai.responses') return undefined;
  if (!req.model || !NON_REASONING.test(req.model)) return undefined;
  const param = req.endpoint === 'openai.chat' ? 'reasoning_effort' : 'reasoning.effort';
  const sent = req.endpoint === 'openai.chat' ? req.json?.reasoning_effort != null : req.json?.reasoning?.effort != null;
  if (!sent) return undefined;
  return {
    type: 'status',
    status: 400,
    errorType: 'invalid_request_error',
    code: 'unsupported_parameter',
    message: `Unsupported parameter: '${param}' is not supported with this model.`,
  };
}

/**
 * A handler that answers requests the real API would refuse with that API's 400, and passes on the rest.
 * `signatures` are the ones the mock itself issued (its default; add any scripted `thinking` signature).
 */
export function strictUpstream(signatures: Iterable<string> = []) {
  const issued = new Set([DEFAULT_SIGNATURE, ...signatures]);
  return (req: MockRequest): Behavior | undefined => anthropicRefusal(req, issued) ?? openaiRefusal(req);
}
