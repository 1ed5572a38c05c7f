import { z } from 'zod';
import type { DiscoverReply, EnvImportReply, KeychainImportReply, TokenImportReply } from '../../shared/imports.js';
import type { ProviderNode } from '../../shared/records.js';
import { isoTime } from '../http/replies.js';
import type { ModelRow } from './available.js';
import type { ConnectionTest } from './health.js';
import type { ModelInfo } from './types.js';

/** Reply schemas of the provider, provider node, model and import routes (RouteDef.reply). */

export const modelsReply = z.object({
  models: z.array(
    z.object({
      id: z.string(),
      provider: z.string(),
      contextLength: z.number().nullable(),
      source: z.enum(['static', 'synced', 'local', 'combo']),
      available: z.boolean(),
      availability: z.enum(['combo', 'connected', 'local', 'no connection', 'unreachable']),
    }) satisfies z.ZodType<ModelRow>,
  ),
});

const connectionTest = {
  ok: z.boolean(),
  latencyMs: z.number(),
  models: z.number().optional(),
  error: z.string().optional(),
};
export const connectionTestReply = z.object(connectionTest) satisfies z.ZodType<ConnectionTest>;
export const testAllReply = z.object({
  ok: z.number(),
  failed: z.number(),
  results: z.array(
    z.object({
      connectionId: z.string(),
      /** The same as connectionId (what earlier versions sent). */
      id: z.string(),
      name: z.string(),
      provider: z.string(),
      providerId: z.string(),
      isActive: z.boolean(),
      ...connectionTest,
    }),
  ),
});

const modelInfo = z.object({
  id: z.string(),
  contextLength: z.number().optional(),
  maxOutputTokens: z.number().optional(),
  reasoning: z.boolean().optional(),
}) satisfies z.ZodType<ModelInfo>;
export const connectionModelsReply = z.object({ provider: z.string(), source: z.enum(['synced', 'static']), models: z.array(modelInfo) });
export const syncModelsReply = z.object({ provider: z.string(), count: z.number(), models: z.array(modelInfo) });

export const nodeReply = z.object({
  id: z.string(),
  name: z.string(),
  prefix: z.string(),
  type: z.enum(['openai-compatible', 'anthropic-compatible']),
  baseUrl: z.string(),
  apiType: z.enum(['chat', 'responses']),
  completions: z.boolean(),
  rerankFormat: z.enum(['cohere', 'tei']).optional(),
  tokenLimitField: z.enum(['auto', 'max_tokens', 'max_completion_tokens']).optional(),
  customHeaders: z.record(z.string(), z.string()),
  createdAt: isoTime,
  updatedAt: isoTime,
}) satisfies z.ZodType<ProviderNode>;

/** `POST /api/models/test`: the target that answered, or the failure in words. */
export const modelTestReply = z.union([
  z.object({
    ok: z.literal(true),
    model: z.string(),
    provider: z.string(),
    served: z.object({ model: z.string(), provider: z.string(), providerId: z.string(), connectionId: z.string().nullable(), connectionName: z.string().nullable() }),
    latencyMs: z.number(),
    upstreamMs: z.number(),
    tokensIn: z.number(),
    tokensOut: z.number(),
    costUsd: z.number().nullable(),
    reply: z.string(),
    traceId: z.string(),
  }),
  z.object({ ok: z.literal(false), model: z.string(), provider: z.string().nullable(), latencyMs: z.number(), error: z.string() }),
]);

const importedConnection = z.object({ id: z.string(), provider: z.string(), name: z.string(), created: z.boolean(), expiresAt: isoTime.nullable() });
export const tokenImportReply = z.object({ imported: z.array(importedConnection), ignored: z.array(z.string()).optional() }) satisfies z.ZodType<TokenImportReply>;
export const discoverReply = z.object({
  accounts: z.array(
    z.object({
      service: z.string(),
      account: z.string(),
      fingerprint: z.string(),
      provider: z.string(),
      kind: z.enum(['file', 'keychain']),
      expiresAt: isoTime.nullable(),
      importable: z.boolean(),
    }),
  ),
}) satisfies z.ZodType<DiscoverReply>;
export const keychainImportReply = z.object({
  imported: z.array(z.object({ service: z.string(), account: z.string(), connection: importedConnection })),
  skipped: z.array(z.object({ service: z.string(), account: z.string(), reason: z.enum(['changed', 'not_found', 'unsupported']) })),
  deprecated: z.string().optional(),
}) satisfies z.ZodType<KeychainImportReply>;
export const envImportReply = z.object({
  results: z.array(
    z.object({
      variable: z.string(),
      provider: z.string(),
      connectionId: z.string().nullable(),
      action: z.enum(['created', 'updated', 'unchanged', 'unsupported']),
      test: z.object({ ok: z.boolean(), error: z.string().optional() }).nullable(),
    }),
  ),
}) satisfies z.ZodType<EnvImportReply>;
