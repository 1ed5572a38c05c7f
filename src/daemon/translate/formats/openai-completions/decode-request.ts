import { z } from 'zod';
import type { IrRequest } from '../../ir.js';
import { decodeError } from '../../errors.js';
import { noteDropped } from '../../util/dropped.js';
import { parseBody } from '../../util/validate.js';
import { isRecord } from '../../util/json.js';

const TOKEN_PROMPT = 'Token-array prompts are not supported: send the prompt as text.';

/** A legacy Completions request. Token prompts and batches are refused below with a clear message. */
const completionRequestSchema = z.looseObject({
  model: z.string().min(1),
  prompt: z.union([z.string(), z.array(z.unknown()).min(1)]),
  suffix: z.string().nullish(),
  echo: z.boolean().nullish(),
  max_tokens: z.number().int().positive().nullish(),
  temperature: z.number().min(0).max(2).nullish(),
  top_p: z.number().min(0).max(1).nullish(),
  stop: z.union([z.string(), z.array(z.string())]).nullish(),
  seed: z.number().int().nullish(),
  frequency_penalty: z.number().min(-2).max(2).nullish(),
  presence_penalty: z.number().min(-2).max(2).nullish(),
  user: z.string().nullish(),
  stream: z.boolean().nullish(),
  stream_options: z.looseObject({ include_usage: z.boolean().nullish() }).nullish(),
  // n and best_of above 1 pass through natively; translated to chat they are refused where the target is
  // known (proxy/chat.ts), since router's chat translation returns one completion.
  n: z.number().int().min(1).nullish(),
  best_of: z.number().int().min(1).nullish(),
});

/** The prompt as one string: a string, or an array holding exactly one string. */
function promptText(prompt: string | unknown[]): string {
  if (typeof prompt === 'string') return prompt;
  if (prompt.every((p) => typeof p === 'number') || prompt.some((p) => Array.isArray(p))) throw decodeError(TOKEN_PROMPT, 'prompt');
  if (prompt.length > 1) throw decodeError('Batched prompts are not supported: send one prompt per request.', 'prompt');
  const only = prompt[0];
  if (typeof only !== 'string') throw decodeError('prompt must be a string or an array of strings.', 'prompt');
  return only;
}

/**
 * Decodes `/v1/completions` into IR: the prompt becomes one user message, and `legacy` keeps the raw prompt
 * with `echo`/`suffix`. No default of 16 tokens is applied (the legacy API's default would truncate replies
 * of chat models); an absent `max_tokens` stays absent.
 */
export function decodeCompletionRequest(body: unknown): IrRequest {
  const req = parseBody(completionRequestSchema, body);
  const prompt = promptText(req.prompt);
  const ir: IrRequest = {
    model: req.model,
    system: [],
    messages: [{ role: 'user', parts: [{ type: 'text', text: prompt }] }],
    stream: req.stream === true,
    legacy: {
      prompt,
      ...(req.suffix != null ? { suffix: req.suffix } : {}),
      ...(req.echo ? { echo: true } : {}),
      ...(isRecord(req.logit_bias) ? { logitBias: req.logit_bias as Record<string, number> } : {}),
    },
  };
  const stop = typeof req.stop === 'string' ? [req.stop] : req.stop;
  const fields: Partial<IrRequest> = {
    maxTokens: req.max_tokens ?? undefined,
    temperature: req.temperature ?? undefined,
    topP: req.top_p ?? undefined,
    stop: stop?.length ? stop : undefined,
    seed: req.seed ?? undefined,
    frequencyPenalty: req.frequency_penalty ?? undefined,
    presencePenalty: req.presence_penalty ?? undefined,
    user: req.user ?? undefined,
    includeUsage: ir.stream && req.stream_options?.include_usage === true ? true : undefined,
  };
  for (const [key, value] of Object.entries(fields)) if (value !== undefined) (ir as unknown as Record<string, unknown>)[key] = value;
  if (req.suffix != null) noteDropped(ir, 'suffix');
  for (const field of ['logprobs', 'logit_bias']) if ((req as Record<string, unknown>)[field] != null) noteDropped(ir, field);
  return ir;
}
