import { z } from 'zod';

/** Compression settings (the `compression` setting; also GET/PUT /api/settings/compression). */
export const compressionSettingsSchema = z
  .object({
    /** Fit requests that would overflow the target model's context length. Off by default. */
    enabled: z.boolean().default(false),
    /** A tool output longer than this (tokens) is cut to its head and tail when the request must shrink. */
    toolOutputMaxTokens: z.number().int().min(32).max(1_000_000).default(2000),
    /** Tokens kept free for the reply when the request names no max tokens (capped at half the context). */
    reserveOutputTokens: z.number().int().min(0).max(1_000_000).default(1024),
    /** Head room for the estimate: gpt-tokenizer counts are not every model's tokenizer. */
    safetyMarginPercent: z.number().min(0).max(50).default(5),
  })
  .strict();
export type CompressionSettings = z.infer<typeof compressionSettingsSchema>;
