import type { UpstreamEncodeOptions } from '../../codec.js';
import type { IrRequest, IrResponseFormat, IrTool, IrToolChoice } from '../../ir.js';
import { noteDropped } from '../../util/dropped.js';
import { budgetToEffort } from '../../util/reasoning.js';
import { encodeMessages } from './encode-messages.js';

type Body = Record<string, unknown>;

function encodeTools(tools: IrTool[], request: IrRequest): Body[] {
  return tools.flatMap((t): Body[] => {
    if (t.type === 'builtin') {
      if (t.format === 'openai-chat') return [t.raw];
      noteDropped(request, `builtin tool ${String(t.raw.type ?? t.raw.name)}`);
      return [];
    }
    const fn: Body = { name: t.name };
    if (t.description !== undefined) fn.description = t.description;
    if (t.parameters) fn.parameters = t.parameters;
    if (t.strict !== undefined) fn.strict = t.strict;
    return [{ type: 'function', function: fn }];
  });
}

function encodeToolChoice(choice: IrToolChoice): unknown {
  return typeof choice === 'string' ? choice : { type: 'function', function: { name: choice.name } };
}

function encodeResponseFormat(format: IrResponseFormat): Body {
  if (format.type !== 'json_schema') return { type: format.type };
  const schema: Body = { name: format.name, schema: format.schema };
  if (format.description !== undefined) schema.description = format.description;
  if (format.strict !== undefined) schema.strict = format.strict;
  return { type: 'json_schema', json_schema: schema };
}

/**
 * `reasoning_effort` from the IR: the effort itself, else the effort closest to a thinking budget. Models
 * that do not take it (gpt-4o-class: OpenAI answers 400) get none; the request says so in `dropped`.
 */
function reasoningEffort(request: IrRequest, options: UpstreamEncodeOptions): string | undefined {
  const r = request.reasoning;
  const effort = r?.effort ?? (r?.budgetTokens !== undefined ? budgetToEffort(r.budgetTokens) : undefined);
  if (effort === undefined || options.reasoningEffort !== false) return effort;
  noteDropped(request, 'reasoning_effort (the model does not take it)');
  return undefined;
}

function addTooling(body: Body, request: IrRequest): void {
  const tools = request.tools ? encodeTools(request.tools, request) : [];
  if (tools.length) body.tools = tools;
  if (request.toolChoice !== undefined) body.tool_choice = encodeToolChoice(request.toolChoice);
  if (request.parallelToolCalls !== undefined && tools.length) body.parallel_tool_calls = request.parallelToolCalls;
}

/**
 * IR -> Chat Completions request. The limit goes out as `max_completion_tokens` (OpenAI's current name;
 * `max_tokens` is rejected by its reasoning models) unless `options.tokenLimitField` names `max_tokens`,
 * which OpenAI-compatible servers take (ProviderDef.chatTokenLimit, via providers/target.ts encodeOptionsFor). Streams always ask for usage, which router needs
 * whether or not the client asked. `top_k` has no equivalent and is dropped.
 */
export function encodeChatRequest(request: IrRequest, options: UpstreamEncodeOptions = {}): Body {
  const body: Body = { model: request.model, messages: encodeMessages(request, options.developerRole !== false) };
  addTooling(body, request);
  const simple: Body = {
    [options.tokenLimitField ?? 'max_completion_tokens']: request.maxTokens,
    temperature: request.temperature,
    top_p: request.topP,
    stop: request.stop?.length ? request.stop : undefined,
    seed: request.seed,
    frequency_penalty: request.frequencyPenalty,
    presence_penalty: request.presencePenalty,
    response_format: request.responseFormat ? encodeResponseFormat(request.responseFormat) : undefined,
    reasoning_effort: reasoningEffort(request, options),
    user: request.user,
    metadata: request.metadata,
  };
  for (const [key, value] of Object.entries(simple)) if (value !== undefined) body[key] = value;
  if (request.topK !== undefined) noteDropped(request, 'top_k');
  if (request.stream) {
    body.stream = true;
    body.stream_options = { include_usage: true };
  }
  return body;
}
