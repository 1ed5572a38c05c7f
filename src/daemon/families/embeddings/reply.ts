import { z } from 'zod';
import type { FamilyReply } from '../family.js';

/**
 * OpenAI's embeddings list: each vector as numbers, or base64 with `encoding_format: "base64"`. Loose: a
 * provider's extra fields pass through.
 */
export const embeddingsReply: FamilyReply = {
  json: z.looseObject({
    object: z.literal('list'),
    data: z.array(z.looseObject({ object: z.literal('embedding'), embedding: z.union([z.array(z.number()), z.string()]), index: z.number() })),
    model: z.string(),
    usage: z.looseObject({ prompt_tokens: z.number(), total_tokens: z.number() }).optional(),
  }),
};
