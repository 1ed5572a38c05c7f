import { z } from 'zod';
import { SYNC_FORMAT, type SyncSnapshot } from '../../shared/sync.js';
import type { Services } from '../services.js';
import { seal } from './signature.js';
import { CREDENTIAL_SETTINGS, LOCAL_SETTINGS } from './trust.js';

/**
 * A router's configuration as sync carries it (the merge of a remote's into this one is apply.ts).
 *
 * Everything that is or may hold a credential travels sealed with a key derived from the shared secret: a
 * connection's credential and providerSpecificData, a node's base URL and custom headers, credential
 * settings (telegramBotToken). Key secrets and hashes, the sync's own settings, the outbound proxy and the
 * allowed origins never travel.
 */

export const NODE_PROVIDER = 'node:';

const sealedSchema = z.object({ sealed: z.string().max(1_000_000) }).strict();
const stamp = z.string().max(40);
/** Shape check of a snapshot from the wire (values are checked again by each store's own rules). */
export const snapshotSchema = z.object({
  format: z.literal(SYNC_FORMAT),
  exportedAt: stamp,
  routerVersion: z.string().max(50),
  connections: z.array(z.object({
    provider: z.string().max(250), name: z.string().max(100), authKind: z.enum(['api-key', 'oauth', 'web-session', 'none']),
    priority: z.number().int(), isActive: z.boolean(), expiresAt: z.string().max(40).nullable(), updatedAt: stamp, secrets: sealedSchema,
  })).max(10_000),
  nodes: z.array(z.object({
    name: z.string().max(100), prefix: z.string().max(50), type: z.enum(['openai-compatible', 'anthropic-compatible']),
    apiType: z.enum(['chat', 'responses']), completions: z.boolean(), rerankFormat: z.enum(['cohere', 'tei']), secrets: sealedSchema, updatedAt: stamp,
  })).max(1_000),
  combos: z.array(z.object({ name: z.string(), strategy: z.string(), models: z.array(z.unknown()), targetTimeoutMs: z.number().nullable(), affinity: z.string().optional(),
    hedgeAfterMs: z.number().nullable().optional(), midStreamRecovery: z.string().nullable().optional(), contextFit: z.boolean().optional(), updatedAt: stamp })).max(10_000),
  keys: z.array(z.object({
    name: z.string().max(100), scopes: z.array(z.string().max(300)).max(100), isActive: z.boolean(),
    dailyRequestLimit: z.number().int().min(0).nullable(), tokenLimits: z.array(z.unknown()).max(100), updatedAt: stamp,
  })).max(10_000),
  settings: z.record(z.string(), z.object({ value: z.unknown(), updatedAt: stamp })),
});

/** A snapshot as received, after the shape check. */
export type WireSnapshot = z.infer<typeof snapshotSchema>;

/** What a node's sealed box holds. */
export const nodeSecretsSchema = z.object({ baseUrl: z.string().max(2000).url(), customHeaders: z.record(z.string().max(200), z.string().max(8000)) }).strict();

/** Updated-at stamps of the API keys (the key store does not expose them). */
export function keyTimes(services: Services): Map<string, string> {
  const rows = services.db.prepare('SELECT id, updated_at FROM api_keys').all() as Array<{ id: string; updated_at: string }>;
  return new Map(rows.map((r) => [r.id, r.updated_at]));
}

/** This router's configuration, credentials sealed with the shared secret. */
export function buildSnapshot(services: Services, secret: string): SyncSnapshot {
  const nodes = services.nodes.list();
  const nodePrefix = new Map(nodes.map((n) => [n.id, n.prefix]));
  const keyStamps = keyTimes(services);
  const settingStamps = services.settings.updatedTimes();
  const current = services.settings.get() as Record<string, unknown>;
  return {
    format: SYNC_FORMAT,
    exportedAt: new Date().toISOString(),
    routerVersion: services.version,
    connections: services.connections.list().map((c) => ({
      provider: nodePrefix.has(c.provider) ? `${NODE_PROVIDER}${nodePrefix.get(c.provider)}` : c.provider,
      name: c.name,
      authKind: c.authKind,
      priority: c.priority,
      isActive: c.isActive,
      expiresAt: c.expiresAt,
      updatedAt: c.updatedAt,
      secrets: seal(secret, { credential: c.credential, providerSpecificData: c.providerSpecificData }),
    })),
    nodes: nodes.map((n) => ({
      name: n.name, prefix: n.prefix, type: n.type, apiType: n.apiType, completions: n.completions, rerankFormat: n.rerankFormat ?? 'cohere',
      secrets: seal(secret, { baseUrl: n.baseUrl, customHeaders: n.customHeaders }), updatedAt: n.updatedAt,
    })),
    combos: services.combos.list().map((c) => ({ name: c.name, strategy: c.strategy, models: [...c.models], targetTimeoutMs: c.targetTimeoutMs, affinity: c.affinity,
      hedgeAfterMs: c.hedgeAfterMs, midStreamRecovery: c.midStreamRecovery, contextFit: c.contextFit, updatedAt: c.updatedAt })),
    keys: services.keys.list().map((k) => ({
      name: k.name, scopes: k.scopes, isActive: k.isActive, dailyRequestLimit: k.dailyRequestLimit, tokenLimits: k.tokenLimits, updatedAt: keyStamps.get(k.id) ?? '',
    })),
    settings: Object.fromEntries(
      Object.keys(current)
        .filter((k) => !LOCAL_SETTINGS.has(k))
        .map((k) => [k, { value: CREDENTIAL_SETTINGS.has(k) ? seal(secret, current[k]) : current[k], updatedAt: settingStamps.get(k) ?? '' }]),
    ),
  };
}
