import type { IrRequest, WireFormat } from '../../ir.js';
import type { UpstreamOnlyFormat } from '../../codec.js';
import { decodeError } from '../../errors.js';

/**
 * Request fields only a Responses upstream understands. They ride in `IrRequest.passthrough` and are merged
 * into the body when the upstream speaks Responses too; other upstreams never see them.
 */
export const PASSTHROUGH_FIELDS = [
  'store',
  'include',
  'previous_response_id',
  'conversation',
  'prompt',
  'background',
  'truncation',
  'service_tier',
  'top_logprobs',
  'max_tool_calls',
  'prompt_cache_key',
  'safety_identifier',
  'stream_options',
] as const;

/**
 * Fields that point at state stored by OpenAI (an earlier response, a conversation, a stored prompt) or ask
 * it to run detached. Dropping them would silently answer a different question, so a request carrying one
 * is rejected unless its upstream is a Responses API.
 */
export const STATEFUL_FIELDS = ['previous_response_id', 'conversation', 'prompt', 'background'] as const;

/** Collects the pass-through fields a Responses client set (plus `text.verbosity` and raw tool choices). */
export function collectPassthrough(body: Record<string, unknown>, rawToolChoice: boolean): Record<string, unknown> {
  const fields: Record<string, unknown> = {};
  for (const key of PASSTHROUGH_FIELDS) if (body[key] != null && body[key] !== false) fields[key] = body[key];
  // `store: false` matters (OpenAI defaults to true), so it is kept even though it is falsy.
  if (body.store === false) fields.store = false;
  const text = body.text as { verbosity?: unknown } | null | undefined;
  if (text?.verbosity != null) fields.text = { verbosity: text.verbosity };
  if (rawToolChoice) fields.tool_choice = body.tool_choice;
  return fields;
}

/**
 * Throws a 400 when a Responses request relies on OpenAI-side state and its upstream is another format.
 * The route calls this once the upstream is known (codecs cannot know it when decoding); upstream codecs of
 * other formats may call it too.
 */
export function assertResponsesStatePortable(request: IrRequest, upstream: WireFormat | UpstreamOnlyFormat): void {
  const pass = request.passthrough;
  if (!pass || pass.format !== 'openai-responses' || upstream === 'openai-responses') return;
  for (const field of STATEFUL_FIELDS) {
    if (pass.fields[field] == null) continue;
    throw decodeError(
      `'${field}' needs state stored by the OpenAI Responses API, but model '${request.model}' is served by a ${upstream} upstream. Send the whole conversation in 'input' instead.`,
      field,
    );
  }
}
