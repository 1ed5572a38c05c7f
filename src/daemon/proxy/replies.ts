import { z } from 'zod';
import { orEventStream } from '../http/replies.js';

/**
 * Reply schemas of the proxy's chat-like routes and catalogs (RouteDef.reply): each client format's reply
 * as its provider documents it. The fields router writes or relies on are named; the objects are loose,
 * since a reply passed through from a provider of the same format keeps the fields that provider adds (a
 * newer API's fields reach the client, as they would talking to it directly). With `stream: true` the route
 * answers an event stream instead; its events are described here and shown in the OpenAPI document.
 */

const num = z.number();
const nullableStr = z.string().nullable();

const toolCall = z.looseObject({ id: z.string(), type: z.literal('function'), function: z.looseObject({ name: z.string(), arguments: z.string() }) });

/** OpenAI's `chat.completion` object. */
export const chatCompletion = z.looseObject({
  id: z.string(),
  object: z.literal('chat.completion'),
  created: num,
  model: z.string(),
  choices: z.array(
    z.looseObject({
      index: num,
      message: z.looseObject({ role: z.literal('assistant'), content: nullableStr, tool_calls: z.array(toolCall).optional(), refusal: nullableStr.optional() }),
      finish_reason: nullableStr,
      logprobs: z.unknown().optional(),
    }),
  ),
  usage: z.looseObject({ prompt_tokens: num, completion_tokens: num, total_tokens: num }).optional(),
});

/** Anthropic's Messages reply. */
export const anthropicMessage = z.looseObject({
  id: z.string(),
  type: z.literal('message'),
  role: z.literal('assistant'),
  model: z.string(),
  /** Content blocks: text, thinking, redacted_thinking, tool_use, server tool blocks. */
  content: z.array(z.looseObject({ type: z.string() })),
  stop_reason: nullableStr,
  stop_sequence: nullableStr,
  usage: z.looseObject({ input_tokens: num, output_tokens: num }),
});

/** OpenAI's Responses `response` object. */
export const responseObject = z.looseObject({
  id: z.string(),
  object: z.literal('response'),
  created_at: num,
  status: z.enum(['completed', 'failed', 'in_progress', 'incomplete', 'cancelled', 'queued']),
  error: z.looseObject({ code: z.string(), message: z.string() }).nullable(),
  incomplete_details: z.looseObject({ reason: z.string() }).nullable(),
  model: z.string(),
  /** Output items: message, reasoning, function_call, ... */
  output: z.array(z.looseObject({ type: z.string() })),
  usage: z.looseObject({ input_tokens: num, output_tokens: num, total_tokens: num }).nullable(),
});

/** OpenAI's legacy `text_completion` object. */
export const textCompletion = z.looseObject({
  id: z.string(),
  object: z.literal('text_completion'),
  created: num,
  model: z.string(),
  choices: z.array(z.looseObject({ text: z.string(), index: num, finish_reason: nullableStr, logprobs: z.unknown().optional() })),
  usage: z.looseObject({ prompt_tokens: num, completion_tokens: num, total_tokens: num }).optional(),
});

/** Gemini's `GenerateContentResponse`. */
export const generateContentResponse = z.looseObject({
  candidates: z.array(z.looseObject({ content: z.looseObject({ role: z.string().optional(), parts: z.array(z.looseObject({})).optional() }).optional(), finishReason: z.string().optional(), index: num.optional() })),
  usageMetadata: z.looseObject({ promptTokenCount: num.optional(), candidatesTokenCount: num.optional(), totalTokenCount: num.optional() }).optional(),
  modelVersion: z.string().optional(),
  responseId: z.string().optional(),
});

/** Anthropic's count_tokens reply. */
export const anthropicTokenCount = z.looseObject({ input_tokens: num });
/** Gemini's countTokens reply. */
export const geminiTokenCount = z.looseObject({ totalTokens: num });

export const chatReply = orEventStream(
  chatCompletion,
  'With `stream: true`: `data:` events each holding a `chat.completion.chunk` object (choices[].delta with role, content, tool_calls fragments; the last chunk carries usage when `stream_options.include_usage` is set), ended by `data: [DONE]`. An error after the stream began is a `data:` event holding `{error: {message, type, code}}`.',
);
export const messagesReply = orEventStream(
  anthropicMessage,
  'With `stream: true`: Anthropic\'s named events: `message_start` (the message with empty content), per block `content_block_start`, `content_block_delta` (text_delta, thinking_delta, signature_delta, input_json_delta) and `content_block_stop`, then `message_delta` (stop_reason, usage) and `message_stop`; `ping` events may come between; an error is `event: error` with `{type: "error", error: {type, message}}`.',
);
export const responsesReply = orEventStream(
  responseObject,
  'With `stream: true`: named events with a `type` and a `sequence_number`: `response.created`, `response.in_progress`, per output item `response.output_item.added`, `response.content_part.added`, `response.output_text.delta` / `response.function_call_arguments.delta` / `response.reasoning_summary_text.delta`, their `.done` events, `response.output_item.done`, then `response.completed` (or `response.incomplete`, `response.failed`) with the whole response object.',
);
export const completionsReply = orEventStream(
  textCompletion,
  'With `stream: true`: `data:` events each holding a `text_completion` object with the next text in choices[].text (usage in the last one with `stream_options.include_usage`), ended by `data: [DONE]`.',
);
/** `:generateContent` and `:countTokens` answer JSON; `:streamGenerateContent` answers SSE (`alt=sse`). */
export const geminiReply = orEventStream(
  z.union([generateContentResponse, geminiTokenCount]),
  '`:streamGenerateContent`: `data:` events each holding a GenerateContentResponse with the next parts (finishReason and usageMetadata in the last), as with `alt=sse`; an error is a `data:` event holding `{error: {code, message, status}}`.',
);

const openAiModel = z.object({ id: z.string(), object: z.literal('model'), created: num, owned_by: z.string(), context_length: num.optional() });
const anthropicModel = z.object({ type: z.literal('model'), id: z.string(), display_name: z.string(), created_at: z.string() });

/** The model catalog (router's own list: these fields only): OpenAI's list, or Anthropic's page when the request sends `anthropic-version`. */
export const modelListReply = z.union([
  z.object({ object: z.literal('list'), data: z.array(openAiModel) }),
  z.object({ data: z.array(anthropicModel), has_more: z.boolean(), first_id: nullableStr, last_id: nullableStr }),
]);

export const geminiModelListReply = z.object({
  models: z.array(z.object({ name: z.string(), displayName: z.string(), inputTokenLimit: num.optional(), supportedGenerationMethods: z.array(z.string()) })),
});
