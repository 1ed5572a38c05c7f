import { z } from 'zod';
import type { FamilyReply } from '../family.js';

/** OpenAI's moderation object: one result per input, with its flagged categories and their scores. */
export const moderationReply: FamilyReply = {
  json: z.looseObject({
    id: z.string(),
    model: z.string(),
    results: z.array(
      z.looseObject({
        flagged: z.boolean(),
        categories: z.record(z.string(), z.boolean()),
        category_scores: z.record(z.string(), z.number()),
        category_applied_input_types: z.record(z.string(), z.array(z.string())).optional(),
      }),
    ),
  }),
};
