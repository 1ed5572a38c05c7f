import type { IrReasoning, IrRequest, IrResponseFormat } from '../../ir.js';
import { parseBody } from '../../util/validate.js';
import { decodeInput } from './decode-input.js';
import { collectPassthrough } from './passthrough.js';
import { responsesRequestSchema, type ResponsesRequest } from './schema.js';
import { decodeToolChoice, decodeTools } from './tools.js';

function decodeFormat(text: ResponsesRequest['text']): IrResponseFormat | undefined {
  const format = text?.format;
  if (!format) return undefined;
  if (format.type !== 'json_schema') return { type: format.type };
  return {
    type: 'json_schema',
    name: format.name,
    schema: format.schema,
    ...(format.strict != null ? { strict: format.strict } : {}),
    ...(format.description != null ? { description: format.description } : {}),
  };
}

function decodeReasoning(reasoning: ResponsesRequest['reasoning']): IrReasoning | undefined {
  if (!reasoning) return undefined;
  const out: IrReasoning = {};
  if (reasoning.effort) out.effort = reasoning.effort;
  // `generate_summary` is the deprecated spelling of `summary`.
  const summary = reasoning.summary ?? reasoning.generate_summary;
  if (summary) out.summary = summary;
  return Object.keys(out).length ? out : undefined;
}

/** Copies the defined, non-null entries of `fields` onto `target`. */
function assignDefined<T extends object>(target: T, fields: Partial<T>): void {
  for (const [key, value] of Object.entries(fields)) {
    if (value !== undefined && value !== null) (target as Record<string, unknown>)[key] = value;
  }
}

/**
 * Decodes and validates a `POST /v1/responses` body into IR; throws a 400 on invalid input. Fields only a
 * Responses upstream understands (`store`, `include`, `previous_response_id`...) go to `passthrough`; the
 * route must call `assertResponsesStatePortable` once it knows the upstream format.
 */
export function decodeResponsesRequest(body: unknown): IrRequest {
  const req = parseBody(responsesRequestSchema, body);
  const ir: IrRequest = { model: req.model, system: [], messages: [], stream: req.stream === true };
  const { system, messages } = decodeInput(req.instructions, req.input, ir);
  ir.system = system;
  ir.messages = messages;
  const toolChoice = decodeToolChoice(req.tool_choice, ir);
  assignDefined(ir, {
    tools: decodeTools(req.tools),
    toolChoice,
    parallelToolCalls: req.parallel_tool_calls ?? undefined,
    maxTokens: req.max_output_tokens ?? undefined,
    temperature: req.temperature ?? undefined,
    topP: req.top_p ?? undefined,
    responseFormat: decodeFormat(req.text),
    reasoning: decodeReasoning(req.reasoning),
    user: req.user ?? req.safety_identifier ?? undefined,
    metadata: req.metadata ?? undefined,
  });
  const fields = collectPassthrough(req, req.tool_choice != null && toolChoice === undefined);
  if (Object.keys(fields).length) ir.passthrough = { format: 'openai-responses', fields };
  return ir;
}
