import type { UpstreamEncodeOptions } from '../../codec.js';
import type { IrReasoning, IrRequest, IrTool } from '../../ir.js';
import { noteDropped } from '../../util/dropped.js';
import { effortToBudget } from '../../util/reasoning.js';
import { foldSystemMessages } from '../../util/system.js';
import { cacheControl, encodeTurns } from './encode-content.js';

type Body = Record<string, unknown>;

/**
 * `max_tokens` when the client gave none (Chat Completions and Gemini clients may omit it; Messages
 * requires it): the model's own maximum from the catalog (UpstreamEncodeOptions.maxOutputTokens), else
 * 4096, which fits every Claude model. The budget must stay below `max_tokens`: a limit that does not
 * leave room above a thinking budget grows to budget + 4096.
 */
export const DEFAULT_MAX_TOKENS = 4096;

/**
 * The largest default for a request that does not stream: Anthropic's SDKs refuse (and the API may answer
 * 400 "Streaming is required...") a non-streaming request whose `max_tokens` could take over 10 minutes,
 * which they reckon as above 128,000 x 10/60 tokens.
 */
export const NON_STREAMING_MAX_TOKENS = 21_333;

function encodeSystem(request: IrRequest): string | Body[] | undefined {
  const only = request.system[0];
  if (!only) return undefined;
  if (request.system.length === 1 && !only.cache) return only.text;
  return request.system.map((p) => ({ type: 'text', text: p.text, ...cacheControl(p.cache) }));
}

function encodeTools(tools: IrTool[], request: IrRequest): Body[] {
  return tools.flatMap((t): Body[] => {
    if (t.type === 'builtin') {
      if (t.format === 'anthropic') return [t.raw];
      noteDropped(request, `builtin tool ${String(t.raw.type ?? t.raw.name)}`);
      return [];
    }
    if (t.strict) noteDropped(request, 'tool strict');
    const schema = t.parameters ?? { type: 'object', properties: {} };
    return [{ name: t.name, ...(t.description !== undefined ? { description: t.description } : {}), input_schema: schema, ...cacheControl(t.cache) }];
  });
}

function encodeToolChoice(request: IrRequest): Body | undefined {
  const choice = request.toolChoice;
  let out: Body | undefined;
  if (choice === 'required') out = { type: 'any' };
  else if (typeof choice === 'object') out = { type: 'tool', name: choice.name };
  else if (choice) out = { type: choice };
  if (request.parallelToolCalls === false && choice !== 'none') out = { type: 'auto', ...out, disable_parallel_tool_use: true };
  return out;
}

/** Thinking: an explicit budget, adaptive when enabled without one, else a budget for the effort (LiteLLM's map). */
function encodeThinking(r: IrReasoning | undefined): Body | undefined {
  if (!r) return undefined;
  if (r.budgetTokens !== undefined) return { type: 'enabled', budget_tokens: r.budgetTokens };
  if (r.enabled === true) return { type: 'adaptive' };
  if (r.enabled === false || !r.effort) return undefined;
  const budget = effortToBudget(r.effort);
  return budget === undefined ? undefined : { type: 'enabled', budget_tokens: budget };
}

/**
 * `output_config`: a JSON schema goes out as native structured output (`format`), not LiteLLM's forced
 * tool: the reply is then plain JSON text and needs no rewriting on the way back (a decoder has no request
 * to recognise a synthetic tool by). `effort` is sent only when the IR came with an explicit thinking
 * switch (an Anthropic client); an OpenAI effort alone is expressed as a thinking budget instead.
 */
function encodeOutputConfig(request: IrRequest): Body | undefined {
  const out: Body = {};
  const f = request.responseFormat;
  if (f?.type === 'json_schema') out.format = { type: 'json_schema', schema: f.schema };
  else if (f?.type === 'json_object') noteDropped(request, 'response_format json_object');
  const r = request.reasoning;
  if (r?.effort && r.enabled !== undefined && r.effort !== 'none') out.effort = r.effort === 'minimal' ? 'low' : r.effort;
  return Object.keys(out).length ? out : undefined;
}

/**
 * Sampling fields; with thinking on, the API accepts no temperature but 1 and no top_k, so they are dropped.
 * The current Claude models refuse `temperature` and `top_p` together ("cannot both be specified"), and
 * clients such as Gemini CLI always send both: `temperature` is kept, `top_p` dropped.
 */
function addSampling(body: Body, request: IrRequest, thinking: boolean): void {
  if (request.temperature !== undefined) {
    if (thinking) noteDropped(request, 'temperature (thinking enabled)');
    else body.temperature = Math.min(request.temperature, 1);
    if (!thinking && request.temperature > 1) noteDropped(request, 'temperature above 1 (clamped)');
  }
  if (request.topP !== undefined) {
    if (body.temperature !== undefined) noteDropped(request, 'top_p (temperature set)');
    else body.top_p = request.topP;
  }
  if (request.topK !== undefined) {
    if (thinking) noteDropped(request, 'top_k (thinking enabled)');
    else body.top_k = request.topK;
  }
  for (const [field, value] of [['seed', request.seed], ['frequency_penalty', request.frequencyPenalty], ['presence_penalty', request.presencePenalty], ['metadata', request.metadata]] as const) {
    if (value !== undefined) noteDropped(request, field);
  }
}

function maxTokens(request: IrRequest, thinking: Body | undefined, modelMax: number | undefined): number {
  if (request.maxTokens !== undefined) return request.maxTokens;
  const limit = modelMax === undefined ? DEFAULT_MAX_TOKENS : request.stream ? modelMax : Math.min(modelMax, NON_STREAMING_MAX_TOKENS);
  const budget = typeof thinking?.budget_tokens === 'number' ? thinking.budget_tokens : 0;
  return budget >= limit ? budget + DEFAULT_MAX_TOKENS : limit;
}

/** The beta that lets a Messages request carry `role: "system"` turns after the first message. */
export const MID_CONVERSATION_SYSTEM_BETA = 'mid-conversation-system-';

/** Whether system messages may stay at their position: only when the client itself asked for the beta. */
function positionalSystem(request: IrRequest): boolean {
  return request.betas?.some((b) => b.startsWith(MID_CONVERSATION_SYSTEM_BETA)) ?? false;
}

/**
 * The headers a Messages request needs beyond the provider's own: the client's `anthropic-beta` flags, whole
 * (they gate body fields such as context_management, interleaved thinking or mid-conversation system
 * messages, and header-only features such as a longer context). Only Anthropic clients have any.
 */
export function messagesRequestHeaders(request: IrRequest): Record<string, string> {
  return request.betas?.length ? { 'anthropic-beta': request.betas.join(',') } : {};
}

/**
 * Chat Completions accepts a conversation made of system/developer messages only; Messages requires at
 * least one turn. Such a system prompt is sent as the user turn, which is how those models read it anyway.
 */
function conversation(request: IrRequest): { messages: Body[]; system: string | Body[] | undefined } {
  const turns = positionalSystem(request) ? request.messages : foldSystemMessages(request.messages);
  if (turns.length || !request.system.length) return { messages: encodeTurns(turns, request), system: encodeSystem(request) };
  return { messages: encodeTurns([{ role: 'user', parts: request.system }], request), system: undefined };
}

/** IR -> Messages request. */
export function encodeMessagesRequest(request: IrRequest, options: UpstreamEncodeOptions = {}): Body {
  const thinking = encodeThinking(request.reasoning);
  const { messages, system } = conversation(request);
  const body: Body = { model: request.model, max_tokens: maxTokens(request, thinking, options.maxOutputTokens), messages };
  if (system !== undefined) body.system = system;
  const tools = request.tools ? encodeTools(request.tools, request) : [];
  if (tools.length) body.tools = tools;
  const toolChoice = tools.length ? encodeToolChoice(request) : undefined;
  if (toolChoice) body.tool_choice = toolChoice;
  if (thinking) body.thinking = thinking;
  const outputConfig = encodeOutputConfig(request);
  if (outputConfig) body.output_config = outputConfig;
  addSampling(body, request, thinking !== undefined);
  if (request.stop?.length) body.stop_sequences = request.stop;
  if (request.user) body.metadata = { user_id: request.user };
  if (request.stream) body.stream = true;
  if (request.passthrough?.format === 'anthropic') Object.assign(body, request.passthrough.fields);
  return body;
}
