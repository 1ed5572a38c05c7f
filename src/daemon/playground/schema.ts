import { z } from 'zod';

/** Longest system prompt, prompt or message content the playground accepts (spec Limits: 50,000). */
export const MAX_PROMPT_CHARS = 50_000;

const role = z.enum(['system', 'user', 'assistant']);

/** One message of a preset's conversation. */
export const presetMessage = z.strictObject({
  role,
  content: z.string().max(MAX_PROMPT_CHARS),
});

/** Sampling parameters a preset remembers; every one optional. */
export const presetParameters = z.strictObject({
  temperature: z.number().min(0).max(2).optional(),
  topP: z.number().min(0).max(1).optional(),
  maxTokens: z.number().int().min(1).max(1_000_000).optional(),
  stop: z.array(z.string().min(1).max(1000)).max(4).optional(),
});

/**
 * The body of POST and PUT /api/playground/presets[/{id}]. Unknown properties are refused; `id`,
 * `createdAt` and `updatedAt` are accepted and ignored, so a client may send back a preset it read.
 */
export const presetBody = z.strictObject({
  name: z.string().min(1).max(100),
  model: z.string().min(1).max(300),
  system: z.string().max(MAX_PROMPT_CHARS).default(''),
  messages: z.array(presetMessage).max(200).default([]),
  parameters: presetParameters.default({}),
  tags: z.array(z.string().min(1).max(50)).max(20).default([]),
  id: z.string().optional(),
  createdAt: z.string().optional(),
  updatedAt: z.string().optional(),
});
export type PresetBody = z.infer<typeof presetBody>;

/** A stored preset as the API returns it. */
export interface Preset {
  id: string;
  name: string;
  model: string;
  system: string;
  messages: Array<z.infer<typeof presetMessage>>;
  parameters: z.infer<typeof presetParameters>;
  tags: string[];
  createdAt: string;
  updatedAt: string;
}

/** The body of POST /api/playground/improve-prompt (spec "Playground"). */
export const improveBody = z
  .strictObject({
    model: z.string().min(1).max(300),
    system: z.string().max(MAX_PROMPT_CHARS).optional(),
    prompt: z.string().max(MAX_PROMPT_CHARS).optional(),
    tone: z.enum(['concise', 'detailed']).default('concise'),
  })
  .refine((b) => Boolean(b.system?.trim() || b.prompt?.trim()), {
    message: 'at least one of system or prompt is required',
    path: ['prompt'],
  });
export type ImproveBody = z.infer<typeof improveBody>;

/** A preset as the replies show it. */
export const presetReply = z.object({
  id: z.string(),
  name: z.string(),
  model: z.string(),
  system: z.string(),
  messages: z.array(presetMessage),
  parameters: presetParameters,
  tags: z.array(z.string()),
  createdAt: z.string(),
  updatedAt: z.string(),
}) satisfies z.ZodType<Preset>;

/** The reply of POST /api/playground/improve-prompt. */
export const improvedReply = z.object({ improvedSystem: z.string(), improvedPrompt: z.string(), tokensIn: z.number(), tokensOut: z.number() });
