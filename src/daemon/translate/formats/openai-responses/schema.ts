import { z } from 'zod';

/**
 * Zod schemas for a `POST /v1/responses` request as a client sends it. They check the shapes translation
 * relies on and let unknown fields through, so newer SDK fields do not break an older router. Input items
 * of types router cannot translate are accepted here and dropped (with a note) by the decoder.
 */

const inputText = z.looseObject({ type: z.literal('input_text'), text: z.string() });
const outputText = z.looseObject({ type: z.literal('output_text'), text: z.string() });
const refusal = z.looseObject({ type: z.literal('refusal'), refusal: z.string() });
const inputImage = z.looseObject({
  type: z.literal('input_image'),
  image_url: z.string().nullish(),
  file_id: z.string().nullish(),
  detail: z.enum(['auto', 'low', 'high']).nullish(),
});
const inputFile = z.looseObject({
  type: z.literal('input_file'),
  file_id: z.string().nullish(),
  file_data: z.string().nullish(),
  file_url: z.string().nullish(),
  filename: z.string().nullish(),
});
const inputAudio = z.looseObject({
  type: z.literal('input_audio'),
  input_audio: z.looseObject({ data: z.string(), format: z.string() }),
});

/** One content part of a `message` input item. */
export const contentPartSchema = z.discriminatedUnion('type', [inputText, outputText, refusal, inputImage, inputFile, inputAudio]);
export type ResponsesContentPart = z.infer<typeof contentPartSchema>;

/** A `message` item; `type` may be omitted (the "easy" input message form). */
export const messageItemSchema = z.looseObject({
  type: z.literal('message').optional(),
  role: z.enum(['user', 'assistant', 'system', 'developer']),
  content: z.union([z.string(), z.array(contentPartSchema)]),
});

/** A `function_call` item (a tool call the model made earlier). */
export const functionCallItemSchema = z.looseObject({
  type: z.literal('function_call'),
  call_id: z.string().min(1),
  name: z.string().min(1),
  arguments: z.string(),
});

/** A `function_call_output` item (the result of a tool call). */
export const functionCallOutputItemSchema = z.looseObject({
  type: z.literal('function_call_output'),
  call_id: z.string().min(1),
  output: z.union([z.string(), z.array(contentPartSchema)]),
});

/** A `reasoning` item: summaries, raw reasoning text and/or the opaque `encrypted_content`. */
export const reasoningItemSchema = z.looseObject({
  type: z.literal('reasoning'),
  summary: z.array(z.looseObject({ text: z.string() })).nullish(),
  content: z.array(z.looseObject({ text: z.string() })).nullish(),
  encrypted_content: z.string().nullish(),
});

/** A flat function tool (`{type:'function', name, parameters}`); other tool types are built-ins. */
export const functionToolSchema = z.looseObject({
  type: z.literal('function'),
  name: z.string().min(1),
  description: z.string().nullish(),
  parameters: z.record(z.string(), z.unknown()).nullish(),
  strict: z.boolean().nullish(),
});

const toolChoice = z.union([
  z.enum(['auto', 'none', 'required']),
  z.looseObject({ type: z.literal('function'), name: z.string().min(1) }),
  z.looseObject({ type: z.string() }),
]);

const textFormat = z.discriminatedUnion('type', [
  z.looseObject({ type: z.literal('text') }),
  z.looseObject({ type: z.literal('json_object') }),
  z.looseObject({
    type: z.literal('json_schema'),
    name: z.string().min(1),
    schema: z.record(z.string(), z.unknown()),
    strict: z.boolean().nullish(),
    description: z.string().nullish(),
  }),
]);

const effort = z.enum(['none', 'minimal', 'low', 'medium', 'high', 'xhigh']);

/** The request body. `model` is required, as the API requires it. */
export const responsesRequestSchema = z.looseObject({
  model: z.string().min(1),
  // Items and tools are checked one by one by the decoder, so errors name the exact item.
  input: z.union([z.string(), z.array(z.looseObject({ type: z.string().optional() }))]).optional(),
  instructions: z.string().nullish(),
  tools: z.array(z.looseObject({ type: z.string().min(1) })).nullish(),
  tool_choice: toolChoice.nullish(),
  parallel_tool_calls: z.boolean().nullish(),
  max_output_tokens: z.number().int().positive().nullish(),
  temperature: z.number().min(0).max(2).nullish(),
  top_p: z.number().min(0).max(1).nullish(),
  text: z.looseObject({ format: textFormat.nullish(), verbosity: z.string().nullish() }).nullish(),
  reasoning: z
    .looseObject({
      effort: effort.nullish(),
      summary: z.enum(['auto', 'concise', 'detailed']).nullish(),
      generate_summary: z.enum(['auto', 'concise', 'detailed']).nullish(),
    })
    .nullish(),
  stream: z.boolean().nullish(),
  user: z.string().nullish(),
  safety_identifier: z.string().nullish(),
  metadata: z.record(z.string(), z.string()).nullish(),
  store: z.boolean().nullish(),
  previous_response_id: z.string().nullish(),
  include: z.array(z.string()).nullish(),
});
export type ResponsesRequest = z.infer<typeof responsesRequestSchema>;
