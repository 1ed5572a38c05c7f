import type { EncodeOptions } from '../../codec.js';
import type { IrFinishReason, IrRequest, IrResponse, IrUsage } from '../../ir.js';
import { idFactory, nowSeconds, replyModel } from '../../util/ids.js';
import { encodeTextFormat } from './encode-request.js';
import { outputItems, type OutputItem } from './output-items.js';
import { encodeToolChoice, encodeTools } from './tools.js';
import { encodeUsage, statusFor } from './usage.js';

/**
 * The response id a client sees. An upstream `resp_` id is kept, so a Responses client can pass it back as
 * `previous_response_id` to the same upstream; any other id is replaced by router's own.
 */
export function responseId(upstreamId: string, newId: (prefix: string) => string): string {
  return upstreamId.startsWith('resp_') ? upstreamId : newId('resp_');
}

/** The request configuration a response object echoes back (the SDK types require these fields). */
export function echoFields(request: IrRequest): Record<string, unknown> {
  const pass = request.passthrough?.format === 'openai-responses' ? request.passthrough.fields : {};
  const instructions = request.system.map((p) => p.text).join('\n\n');
  return {
    instructions: instructions || null,
    max_output_tokens: request.maxTokens ?? null,
    parallel_tool_calls: request.parallelToolCalls ?? true,
    previous_response_id: pass.previous_response_id ?? null,
    reasoning: { effort: request.reasoning?.effort ?? null, summary: request.reasoning?.summary ?? null },
    store: pass.store ?? true,
    temperature: request.temperature ?? 1,
    text: { format: encodeTextFormat(request.responseFormat) ?? { type: 'text' } },
    tool_choice: pass.tool_choice ?? encodeToolChoice(request.toolChoice) ?? 'auto',
    tools: encodeTools(request.tools, request) ?? [],
    top_p: request.topP ?? 1,
    truncation: pass.truncation ?? 'disabled',
    user: request.user ?? null,
    metadata: request.metadata ?? {},
  };
}

/** Everything a response object needs besides the echoed request. */
export interface ResponseState {
  id: string;
  createdAt: number;
  model: string;
  output: OutputItem[];
  finish?: IrFinishReason;
  usage?: IrUsage;
  error?: { code: string; message: string };
}

/**
 * A response object. Without `finish` it is `in_progress` (the stream's opening snapshot); with it, the
 * status follows the finish reason (`incomplete` for truncation and filtering, `failed` for errors).
 */
export function responseObject(state: ResponseState, request: IrRequest): Record<string, unknown> {
  const outcome = state.finish ? statusFor(state.finish) : { status: 'in_progress', incomplete_details: null };
  return {
    id: state.id,
    object: 'response',
    created_at: state.createdAt,
    status: outcome.status,
    error: state.error ?? (outcome.status === 'failed' ? { code: 'server_error', message: 'The upstream response failed.' } : null),
    incomplete_details: outcome.incomplete_details,
    model: state.model,
    output: state.output,
    ...echoFields(request),
    usage: state.usage ? encodeUsage(state.usage) : null,
  };
}

/** IR reply -> response object, for a Responses client. */
export function encodeResponsesResponse(response: IrResponse, request: IrRequest, options?: EncodeOptions): Record<string, unknown> {
  const newId = idFactory(options);
  const messageStatus = response.finishReason === 'length' ? 'incomplete' : 'completed';
  const state: ResponseState = {
    id: responseId(response.id, newId),
    createdAt: nowSeconds(options),
    model: replyModel(response.model, request),
    output: outputItems(response.parts, messageStatus, newId),
    finish: response.finishReason,
    ...(response.usage ? { usage: response.usage } : {}),
  };
  return responseObject(state, request);
}
