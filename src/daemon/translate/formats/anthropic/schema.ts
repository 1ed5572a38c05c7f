import { z } from 'zod';

/**
 * Zod schemas for an Anthropic Messages request. Content blocks are validated one by one by their `type`
 * (see `blockSchemas`), so an error names the exact block; unknown fields pass through.
 */

const cacheControl = z.looseObject({ type: z.literal('ephemeral'), ttl: z.string().nullish() }).nullish();

const textBlock = z.looseObject({ type: z.literal('text'), text: z.string(), cache_control: cacheControl });
const mediaSource = z.discriminatedUnion('type', [
  z.looseObject({ type: z.literal('base64'), media_type: z.string().min(1), data: z.string() }),
  z.looseObject({ type: z.literal('url'), url: z.string().min(1) }),
  z.looseObject({ type: z.literal('file'), file_id: z.string().min(1) }),
  z.looseObject({ type: z.literal('text'), media_type: z.string().nullish(), data: z.string() }),
  z.looseObject({ type: z.literal('content'), content: z.union([z.string(), z.array(z.looseObject({ type: z.string() }))]) }),
]);
const imageBlock = z.looseObject({ type: z.literal('image'), source: mediaSource, cache_control: cacheControl });
const documentBlock = z.looseObject({
  type: z.literal('document'),
  source: mediaSource,
  title: z.string().nullish(),
  cache_control: cacheControl,
});
const toolUseBlock = z.looseObject({
  type: z.literal('tool_use'),
  id: z.string().min(1),
  name: z.string().min(1),
  input: z.record(z.string(), z.unknown()),
  cache_control: cacheControl,
});
const toolResultBlock = z.looseObject({
  type: z.literal('tool_result'),
  tool_use_id: z.string().min(1),
  content: z.union([z.string(), z.array(z.looseObject({ type: z.string() }))]).nullish(),
  is_error: z.boolean().nullish(),
  cache_control: cacheControl,
});
const thinkingBlock = z.looseObject({ type: z.literal('thinking'), thinking: z.string(), signature: z.string() });
const redactedBlock = z.looseObject({ type: z.literal('redacted_thinking'), data: z.string() });

/** Schemas of the block types router translates; other block types are dropped (noted in `dropped`). */
export const blockSchemas = {
  text: textBlock,
  image: imageBlock,
  document: documentBlock,
  tool_use: toolUseBlock,
  tool_result: toolResultBlock,
  thinking: thinkingBlock,
  redacted_thinking: redactedBlock,
} as const;

export type AnthropicBlock = { [K in keyof typeof blockSchemas]: z.infer<(typeof blockSchemas)[K]> }[keyof typeof blockSchemas];
export type AnthropicCacheControl = z.infer<typeof cacheControl>;

const anyBlock = z.looseObject({ type: z.string().min(1) });
/**
 * A turn. `system` is the mid-conversation system message (beta `mid-conversation-system-2026-04-07`, sent by
 * Claude Code 2.1 for non-Claude model names); only it may omit `content`.
 */
const messageSchema = z
  .looseObject({
    role: z.enum(['user', 'assistant', 'system']),
    content: z.union([z.string(), z.array(anyBlock)]).optional(),
  })
  .superRefine((m, ctx) => {
    if (m.role !== 'system' && m.content === undefined) ctx.addIssue({ code: 'custom', path: ['content'], message: 'Required: a string or an array of content blocks' });
  });

/** A custom tool (has `input_schema`); any other typed tool is a server/built-in tool kept raw. */
export const customToolSchema = z.looseObject({
  type: z.literal('custom').nullish(),
  name: z.string().min(1),
  description: z.string().nullish(),
  input_schema: z.record(z.string(), z.unknown()),
  cache_control: cacheControl,
});
const toolSchema = z.looseObject({ type: z.string().nullish(), name: z.string().min(1) });

const toolChoiceSchema = z.discriminatedUnion('type', [
  z.looseObject({ type: z.enum(['auto', 'any', 'none']), disable_parallel_tool_use: z.boolean().nullish() }),
  z.looseObject({ type: z.literal('tool'), name: z.string().min(1), disable_parallel_tool_use: z.boolean().nullish() }),
]);

const thinkingSchema = z.discriminatedUnion('type', [
  z.looseObject({ type: z.literal('enabled'), budget_tokens: z.number().int().min(1024) }),
  z.looseObject({ type: z.literal('disabled') }),
  z.looseObject({ type: z.literal('adaptive') }),
]);

const outputConfigSchema = z.looseObject({
  effort: z.enum(['low', 'medium', 'high', 'xhigh', 'max']).nullish(),
  format: z.looseObject({ type: z.literal('json_schema'), schema: z.record(z.string(), z.unknown()) }).nullish(),
});

/** A whole Messages request; `max_tokens` is required, as the API requires it. */
export const messagesRequestSchema = z.looseObject({
  model: z.string().min(1),
  max_tokens: z.number().int().positive(),
  messages: z.array(messageSchema).min(1),
  system: z.union([z.string(), z.array(textBlock)]).nullish(),
  metadata: z.looseObject({ user_id: z.string().nullish() }).nullish(),
  stop_sequences: z.array(z.string()).nullish(),
  stream: z.boolean().nullish(),
  temperature: z.number().min(0).max(1).nullish(),
  top_p: z.number().min(0).max(1).nullish(),
  top_k: z.number().int().min(0).nullish(),
  tools: z.array(toolSchema).nullish(),
  tool_choice: toolChoiceSchema.nullish(),
  thinking: thinkingSchema.nullish(),
  output_config: outputConfigSchema.nullish(),
});
export type MessagesRequest = z.infer<typeof messagesRequestSchema>;
