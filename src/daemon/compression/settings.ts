import { z } from 'zod';

/** Compression settings (the `compression` setting; also GET/PUT /api/settings/compression). */
export const compressionSettingsSchema = z
  .object({
    enabled: z.boolean().default(false).describe("Fit requests that would overflow the target model's context length. Off by default."),
    toolOutputMaxTokens: z.number().int().min(32).max(1_000_000).default(2000).describe('A tool output longer than this (tokens) is cut to its head and tail when the request must shrink.'),
    reserveOutputTokens: z.number().int().min(0).max(1_000_000).default(1024).describe('Tokens kept free for the reply when the request names no max tokens (capped at half the context).'),
    safetyMarginPercent: z.number().min(0).max(50).default(5).describe("Head room for the estimate: gpt-tokenizer counts are not every model's tokenizer."),
  })
  .strict();
export type CompressionSettings = z.infer<typeof compressionSettingsSchema>;
