import type { IrReasoning, IrRequest, IrResponseFormat } from '../../ir.js';
import { noteDropped } from '../../util/dropped.js';
import { budgetToEffort } from '../../util/reasoning.js';
import { encodeInput } from './encode-input.js';
import { encodeToolChoice, encodeTools } from './tools.js';

/** IR response format as the Responses `text.format` object. */
export function encodeTextFormat(format: IrResponseFormat | undefined): Record<string, unknown> | undefined {
  if (!format) return undefined;
  if (format.type !== 'json_schema') return { type: format.type };
  return {
    type: 'json_schema',
    name: format.name,
    schema: format.schema,
    ...(format.strict !== undefined ? { strict: format.strict } : {}),
    ...(format.description !== undefined ? { description: format.description } : {}),
  };
}

/**
 * IR reasoning as Responses `reasoning`. A budget becomes the nearest effort; a client that asked for
 * thinking by budget or on/off (Anthropic, Gemini) wants to see it, so it gets summaries.
 */
export function encodeReasoning(reasoning: IrReasoning | undefined): Record<string, unknown> | undefined {
  if (!reasoning || reasoning.enabled === false) return undefined;
  const effort = reasoning.effort ?? (reasoning.budgetTokens ? budgetToEffort(reasoning.budgetTokens) : undefined);
  const wantsText = reasoning.budgetTokens !== undefined || reasoning.enabled === true;
  const summary = reasoning.summary ?? (wantsText ? 'auto' : undefined);
  if (!effort && !summary) return undefined;
  return { ...(effort ? { effort } : {}), ...(summary ? { summary } : {}) };
}

function noteUnsupported(request: IrRequest): void {
  const unsupported: Array<[string, unknown]> = [
    ['stop', request.stop],
    ['seed', request.seed],
    ['top_k', request.topK],
    ['frequency_penalty', request.frequencyPenalty],
    ['presence_penalty', request.presencePenalty],
  ];
  for (const [name, value] of unsupported) if (value !== undefined) noteDropped(request, name);
}

/**
 * Storage defaults for clients of other formats: `store: false`, since they can never refer to a stored
 * response and a local-first proxy should not leave conversations on the provider; with reasoning on,
 * `include` asks for the encrypted reasoning so it can come back as a thinking signature next turn.
 */
function storageDefaults(request: IrRequest, reasoning: Record<string, unknown> | undefined): Record<string, unknown> {
  if (request.passthrough?.format === 'openai-responses') return {};
  return { store: false, ...(reasoning ? { include: ['reasoning.encrypted_content'] } : {}) };
}

/** Builds the `POST /v1/responses` body for an IR request. */
export function encodeResponsesRequest(request: IrRequest): Record<string, unknown> {
  noteUnsupported(request);
  const reasoning = encodeReasoning(request.reasoning);
  const format = encodeTextFormat(request.responseFormat);
  const instructions = request.system.map((p) => p.text).join('\n\n');
  const input = encodeInput(request.messages);
  const body: Record<string, unknown> = { model: request.model };
  // A conversation that is only a system prompt is sent as the user turn, as for the other upstreams.
  if (!input.length && instructions) input.push({ type: 'message', role: 'user', content: [{ type: 'input_text', text: instructions }] });
  else if (instructions) body.instructions = instructions;
  body.input = input;
  const optional: Record<string, unknown> = {
    tools: encodeTools(request.tools, request),
    tool_choice: encodeToolChoice(request.toolChoice),
    parallel_tool_calls: request.parallelToolCalls,
    max_output_tokens: request.maxTokens,
    temperature: request.temperature,
    top_p: request.topP,
    text: format ? { format } : undefined,
    reasoning,
    user: request.user,
    metadata: request.metadata,
    ...storageDefaults(request, reasoning),
    stream: request.stream ? true : undefined,
  };
  for (const [key, value] of Object.entries(optional)) if (value !== undefined) body[key] = value;
  mergePassthrough(body, request);
  return body;
}

/** Same-format fields win over computed ones; `text` is merged so `verbosity` joins the format. */
function mergePassthrough(body: Record<string, unknown>, request: IrRequest): void {
  const pass = request.passthrough;
  if (pass?.format !== 'openai-responses') return;
  // IR `user` was read from `safety_identifier` when the client sent only that; send it back as it came.
  if (pass.fields.safety_identifier !== undefined && pass.fields.safety_identifier === body.user) delete body.user;
  for (const [key, value] of Object.entries(pass.fields)) {
    body[key] = key === 'text' ? { ...(body.text as object | undefined), ...(value as object) } : value;
  }
}
