import { z } from 'zod';

/**
 * Zod schemas for a Chat Completions request as a client sends it. They check what the translation relies
 * on (shapes and types) and let unknown fields through, so newer SDK fields do not break old routers.
 */

const textPart = z.looseObject({ type: z.literal('text'), text: z.string() });
const imagePart = z.looseObject({
  type: z.literal('image_url'),
  image_url: z.looseObject({ url: z.string().min(1), detail: z.enum(['auto', 'low', 'high']).nullish() }),
});
const audioPart = z.looseObject({
  type: z.literal('input_audio'),
  input_audio: z.looseObject({ data: z.string(), format: z.string() }),
});
const filePart = z.looseObject({
  type: z.literal('file'),
  file: z.looseObject({ file_id: z.string().nullish(), file_data: z.string().nullish(), filename: z.string().nullish() }),
});
const refusalPart = z.looseObject({ type: z.literal('refusal'), refusal: z.string() });

/** One content part of a user message. */
export const userPartSchema = z.discriminatedUnion('type', [textPart, imagePart, audioPart, filePart]);
export type ChatUserPart = z.infer<typeof userPartSchema>;

const textContent = z.union([z.string(), z.array(textPart)]);

const toolCall = z.looseObject({
  id: z.string().min(1),
  type: z.literal('function').optional(),
  function: z.looseObject({ name: z.string().min(1), arguments: z.string() }),
});

/** LiteLLM-style `thinking_blocks`, the only way an OpenAI-format client can hand back signed thinking. */
const thinkingBlock = z.discriminatedUnion('type', [
  z.looseObject({ type: z.literal('thinking'), thinking: z.string(), signature: z.string().nullish() }),
  z.looseObject({ type: z.literal('redacted_thinking'), data: z.string() }),
]);
export type ChatThinkingBlock = z.infer<typeof thinkingBlock>;

const systemMessage = z.looseObject({ role: z.enum(['system', 'developer']), content: textContent, name: z.string().nullish() });
const userMessage = z.looseObject({
  role: z.literal('user'),
  content: z.union([z.string(), z.array(userPartSchema).min(1)]),
  name: z.string().nullish(),
});
const assistantMessage = z.looseObject({
  role: z.literal('assistant'),
  content: z.union([z.string(), z.array(z.discriminatedUnion('type', [textPart, refusalPart]))]).nullish(),
  refusal: z.string().nullish(),
  tool_calls: z.array(toolCall).nullish(),
  name: z.string().nullish(),
  reasoning_content: z.string().nullish(),
  reasoning: z.string().nullish(),
  thinking_blocks: z.array(thinkingBlock).nullish(),
});
const toolMessage = z.looseObject({ role: z.literal('tool'), tool_call_id: z.string().min(1), content: textContent });

/** One message of `messages`. The deprecated `function` role is not accepted (use `tool`). */
export const messageSchema = z.discriminatedUnion('role', [systemMessage, userMessage, assistantMessage, toolMessage]);
export type ChatMessage = z.infer<typeof messageSchema>;
export type ChatAssistantMessage = z.infer<typeof assistantMessage>;

/** A function tool; validated on its own (see decode-request) so errors name its fields. */
export const functionToolSchema = z.looseObject({
  type: z.literal('function'),
  function: z.looseObject({
    name: z.string().min(1),
    description: z.string().nullish(),
    parameters: z.record(z.string(), z.unknown()).nullish(),
    strict: z.boolean().nullish(),
  }),
});
/** Tools: functions, or any other typed tool (e.g. `custom`), which is kept raw as a built-in. */
const toolSchema = z.looseObject({ type: z.string().min(1) });
const otherType = z.string().refine((t) => t !== 'function', 'expected a function tool');

const toolChoiceSchema = z.union([
  z.enum(['auto', 'none', 'required']),
  z.looseObject({ type: z.literal('function'), function: z.looseObject({ name: z.string().min(1) }) }),
  z.looseObject({ type: otherType }),
]);

const responseFormatSchema = z.discriminatedUnion('type', [
  z.looseObject({ type: z.literal('text') }),
  z.looseObject({ type: z.literal('json_object') }),
  z.looseObject({
    type: z.literal('json_schema'),
    json_schema: z.looseObject({
      name: z.string().min(1),
      schema: z.record(z.string(), z.unknown()).nullish(),
      strict: z.boolean().nullish(),
      description: z.string().nullish(),
    }),
  }),
]);

const positiveInt = z.number().int().positive();

/** A whole Chat Completions request. */
export const chatRequestSchema = z.looseObject({
  model: z.string().min(1),
  messages: z.array(messageSchema).min(1),
  tools: z.array(toolSchema).nullish(),
  tool_choice: toolChoiceSchema.nullish(),
  parallel_tool_calls: z.boolean().nullish(),
  response_format: responseFormatSchema.nullish(),
  max_tokens: positiveInt.nullish(),
  max_completion_tokens: positiveInt.nullish(),
  stop: z.union([z.string(), z.array(z.string())]).nullish(),
  temperature: z.number().min(0).max(2).nullish(),
  top_p: z.number().min(0).max(1).nullish(),
  seed: z.number().int().nullish(),
  frequency_penalty: z.number().min(-2).max(2).nullish(),
  presence_penalty: z.number().min(-2).max(2).nullish(),
  reasoning_effort: z.enum(['none', 'minimal', 'low', 'medium', 'high', 'xhigh']).nullish(),
  user: z.string().nullish(),
  metadata: z.record(z.string(), z.string()).nullish(),
  stream: z.boolean().nullish(),
  stream_options: z.looseObject({ include_usage: z.boolean().nullish() }).nullish(),
  n: z.number().int().min(1).max(1, 'n > 1 is not supported by this router').nullish(),
});
export type ChatRequest = z.infer<typeof chatRequestSchema>;
