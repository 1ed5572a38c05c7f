import type { IrRequest, IrResponseFormat, IrTool, IrToolChoice } from '../../ir.js';
import { cacheMarkerOf } from '../../util/cache.js';
import { noteDropped } from '../../util/dropped.js';
import { parseAt, parseBody } from '../../util/validate.js';
import { decodeMessages } from './decode-messages.js';
import { chatRequestSchema, functionToolSchema, type ChatRequest } from './schema.js';

/** Request fields router accepts but cannot carry to another format; noted in `dropped` when present. */
const UNSUPPORTED = ['logit_bias', 'logprobs', 'top_logprobs', 'modalities', 'audio', 'prediction', 'service_tier', 'store', 'web_search_options', 'verbosity', 'prompt_cache_key', 'safety_identifier'];

function decodeTools(tools: ChatRequest['tools']): IrTool[] | undefined {
  if (!tools?.length) return undefined;
  return tools.map((raw, i): IrTool => {
    if (raw.type !== 'function') return { type: 'builtin', format: 'openai-chat', raw };
    const f = parseAt(functionToolSchema, raw, `tools[${i}]`).function;
    return {
      type: 'function',
      name: f.name,
      ...(f.description != null ? { description: f.description } : {}),
      ...(f.parameters ? { parameters: f.parameters } : {}),
      ...(f.strict != null ? { strict: f.strict } : {}),
      ...cacheMarkerOf(raw.cache_control),
    };
  });
}

function decodeToolChoice(choice: ChatRequest['tool_choice'], request: IrRequest): IrToolChoice | undefined {
  if (choice == null) return undefined;
  if (typeof choice === 'string') return choice;
  if (choice.type === 'function' && 'function' in choice) return { name: (choice.function as { name: string }).name };
  noteDropped(request, `tool_choice.type=${choice.type}`);
  return undefined;
}

function decodeResponseFormat(format: ChatRequest['response_format']): IrResponseFormat | undefined {
  if (!format) return undefined;
  if (format.type !== 'json_schema') return { type: format.type };
  const s = format.json_schema;
  return {
    type: 'json_schema',
    name: s.name,
    schema: s.schema ?? {},
    ...(s.strict != null ? { strict: s.strict } : {}),
    ...(s.description != null ? { description: s.description } : {}),
  };
}

function stopList(stop: ChatRequest['stop']): string[] | undefined {
  if (stop == null) return undefined;
  const list = typeof stop === 'string' ? [stop] : stop;
  return list.length ? list : undefined;
}

/** Copies the defined entries of `fields` onto `target` (so absent and null fields stay absent). */
function assignDefined<T extends object>(target: T, fields: Partial<T>): void {
  for (const [key, value] of Object.entries(fields)) {
    if (value !== undefined && value !== null) (target as Record<string, unknown>)[key] = value;
  }
}

/** Decodes and validates a Chat Completions request into IR; throws a 400 on invalid input. */
export function decodeChatRequest(body: unknown): IrRequest {
  const req = parseBody(chatRequestSchema, body);
  const { system, messages } = decodeMessages(req.messages);
  const ir: IrRequest = { model: req.model, system, messages, stream: req.stream === true };
  assignDefined(ir, {
    tools: decodeTools(req.tools),
    toolChoice: decodeToolChoice(req.tool_choice, ir),
    parallelToolCalls: req.parallel_tool_calls ?? undefined,
    maxTokens: req.max_completion_tokens ?? req.max_tokens ?? undefined,
    temperature: req.temperature ?? undefined,
    topP: req.top_p ?? undefined,
    stop: stopList(req.stop),
    seed: req.seed ?? undefined,
    frequencyPenalty: req.frequency_penalty ?? undefined,
    presencePenalty: req.presence_penalty ?? undefined,
    responseFormat: decodeResponseFormat(req.response_format),
    reasoning: req.reasoning_effort ? { effort: req.reasoning_effort } : undefined,
    includeUsage: ir.stream && req.stream_options?.include_usage === true ? true : undefined,
    user: req.user ?? undefined,
    metadata: req.metadata ?? undefined,
  });
  for (const field of UNSUPPORTED) if ((req as Record<string, unknown>)[field] != null) noteDropped(ir, field);
  return ir;
}
