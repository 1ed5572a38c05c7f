import { z } from 'zod';
import { about } from '../settings/definitions.js';
import type { SettingsSection } from '../settings/registry.js';

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

/** The `compression` settings section (settings/registry.ts; registered by src/daemon/settings-sections.ts). */
export const compressionSettings: SettingsSection<CompressionSettings> = {
  key: 'compression',
  schema: compressionSettingsSchema.prefault({}).meta(about({ group: 'compression', description: "Fit requests that would overflow the target model's context (docs/compression.md)." })),
};

declare module '../settings/registry.js' {
  interface FeatureSettings {
    compression: CompressionSettings;
  }
}
