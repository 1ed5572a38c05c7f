import { z } from 'zod';
import type { SyncChange, SyncReport, SyncSnapshot } from '../../shared/sync.js';
import { checkCombo, comboBody } from '../combos/validate.js';
import type { Connection } from '../providers/connections.js';
import type { AuthKind, Credential } from '../providers/types.js';
import type { Services } from '../services.js';
import { settingsPatchSchema, type Settings } from '../settings/store.js';
import { seal, unseal } from './signature.js';

/**
 * A router's configuration as sync carries it, and the merge of a remote's into this one.
 *
 * Records are matched by what a person names them (connection: provider + name; node: prefix; combo and
 * key: name), never by id: ids are random per machine. Merge rules (docs/operations.md):
 * - equal content: unchanged;
 * - missing here: created;
 * - different: the side changed last (updatedAt) wins; a newer local record is kept and reported;
 * - nothing is deleted by a sync;
 * - credentials and providerSpecificData travel sealed and are applied only with `overwriteCredentials`;
 *   without it a new connection arrives inactive, marked "credentials need re-entry".
 */

/** Settings that never travel: the sync's own, and the machine's network set-up. */
const LOCAL_SETTINGS = new Set<string>(['cloudSync', 'outboundProxy', 'allowedOrigins']);
/** Settings that are credentials: applied only with overwriteCredentials. */
const CREDENTIAL_SETTINGS = new Set<string>(['telegramBotToken']);

const NODE_PROVIDER = 'node:';
/** lastError of a connection a sync created without its credentials. */
const NEEDS_REENTRY = 'credentials need re-entry (synced without overwriteCredentials)';

const sealedSchema = z.object({ sealed: z.string().max(1_000_000) }).strict();
const stamp = z.string().max(40);
/** Shape check of a snapshot from the wire (values are checked again by each store's own rules). */
export const snapshotSchema = z.object({
  format: z.literal('router-sync/1'),
  exportedAt: stamp,
  routerVersion: z.string().max(50),
  connections: z.array(z.object({
    provider: z.string().max(250), name: z.string().max(100), authKind: z.enum(['api-key', 'oauth', 'web-session', 'none']),
    priority: z.number().int(), isActive: z.boolean(), expiresAt: z.string().max(40).nullable(), updatedAt: stamp, secrets: sealedSchema,
  })).max(10_000),
  nodes: z.array(z.object({
    name: z.string().max(100), prefix: z.string().max(50), type: z.enum(['openai-compatible', 'anthropic-compatible']),
    baseUrl: z.string().max(2000).url(), apiType: z.enum(['chat', 'responses']), customHeaders: z.record(z.string(), z.string()), updatedAt: stamp,
  })).max(1_000),
  combos: z.array(z.object({ name: z.string(), strategy: z.string(), models: z.array(z.unknown()), targetTimeoutMs: z.number().nullable(), updatedAt: stamp })).max(10_000),
  keys: z.array(z.object({
    name: z.string().max(100), scopes: z.array(z.string().max(300)).max(100), isActive: z.boolean(),
    dailyRequestLimit: z.number().int().min(0).nullable(), tokenLimits: z.array(z.unknown()).max(100), updatedAt: stamp,
  })).max(10_000),
  settings: z.record(z.string(), z.object({ value: z.unknown(), updatedAt: stamp })),
});

const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

/** This router's configuration, credentials sealed with the shared secret. */
export function buildSnapshot(services: Services, secret: string): SyncSnapshot {
  const nodes = services.nodes.list();
  const nodePrefix = new Map(nodes.map((n) => [n.id, n.prefix]));
  const keyStamps = new Map((services.db.prepare('SELECT id, updated_at FROM api_keys').all() as Array<{ id: string; updated_at: string }>).map((r) => [r.id, r.updated_at]));
  const settingStamps = settingTimes(services);
  const current = services.settings.get() as Record<string, unknown>;
  return {
    format: 'router-sync/1',
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
    nodes: nodes.map((n) => ({ name: n.name, prefix: n.prefix, type: n.type, baseUrl: n.baseUrl, apiType: n.apiType, customHeaders: n.customHeaders, updatedAt: n.updatedAt })),
    combos: services.combos.list().map((c) => ({ name: c.name, strategy: c.strategy, models: [...c.models], targetTimeoutMs: c.targetTimeoutMs, updatedAt: c.updatedAt })),
    keys: services.keys.list().map((k) => ({
      name: k.name, scopes: k.scopes, isActive: k.isActive, dailyRequestLimit: k.dailyRequestLimit, tokenLimits: k.tokenLimits, updatedAt: keyStamps.get(k.id) ?? '',
    })),
    settings: Object.fromEntries(
      Object.keys(current).filter((k) => !LOCAL_SETTINGS.has(k)).map((k) => [k, { value: current[k], updatedAt: settingStamps.get(k) ?? '' }]),
    ),
  };
}

function settingTimes(services: Services): Map<string, string> {
  const rows = services.db.prepare('SELECT key, updated_at FROM settings').all() as Array<{ key: string; updated_at: string }>;
  return new Map(rows.map((r) => [r.key, r.updated_at]));
}

/** Applies a remote snapshot (already verified and shape-checked) and reports record by record. */
export function applySnapshot(services: Services, snap: SyncSnapshot, secret: string, overwriteCredentials: boolean): SyncReport {
  const report: SyncReport = { changes: [], unchanged: 0 };
  const note = (c: SyncChange) => report.changes.push(c);
  const guarded = (kind: SyncChange['kind'], name: string, fn: () => void) => {
    try {
      fn();
    } catch (err) {
      note({ kind, name, result: 'skipped', reason: err instanceof Error ? err.message : 'invalid record' });
    }
  };
  // Nodes first: connections and combos may refer to them.
  for (const n of snap.nodes) guarded('node', n.prefix, () => {
    const local = services.nodes.byPrefix(n.prefix);
    const input = { name: n.name, prefix: n.prefix, type: n.type, baseUrl: n.baseUrl, apiType: n.apiType, customHeaders: n.customHeaders } as const;
    if (!local) return (services.nodes.create(input as never), note({ kind: 'node', name: n.prefix, result: 'created' }));
    if (same([local.name, local.type, local.baseUrl, local.apiType, local.customHeaders], [n.name, n.type, n.baseUrl, n.apiType, n.customHeaders])) return void report.unchanged++;
    if (local.updatedAt >= n.updatedAt) return note({ kind: 'node', name: n.prefix, result: 'kept-local', reason: 'changed here more recently' });
    services.nodes.update(local.id, input as never);
    note({ kind: 'node', name: n.prefix, result: 'updated' });
  });
  for (const c of snap.connections) guarded('connection', `${c.provider}/${c.name}`, () => applyConnection(services, c, secret, overwriteCredentials, report));
  for (const c of snap.combos) guarded('combo', c.name, () => {
    const local = services.combos.byName(c.name);
    if (local && same([local.strategy, local.models, local.targetTimeoutMs], [c.strategy, c.models, c.targetTimeoutMs])) return void report.unchanged++;
    if (local && local.updatedAt >= c.updatedAt) return note({ kind: 'combo', name: c.name, result: 'kept-local', reason: 'changed here more recently' });
    const body = comboBody.parse({ name: c.name, strategy: c.strategy, models: c.models, targetTimeoutMs: c.targetTimeoutMs });
    if (local) services.combos.update(local.id, checkCombo(body, services, local.id));
    else services.combos.create(checkCombo(body, services));
    note({ kind: 'combo', name: c.name, result: local ? 'updated' : 'created' });
  });
  const keyStamps = new Map((services.db.prepare('SELECT id, updated_at FROM api_keys').all() as Array<{ id: string; updated_at: string }>).map((r) => [r.id, r.updated_at]));
  for (const k of snap.keys) guarded('key', k.name, () => {
    const local = services.keys.list().find((x) => x.name === k.name);
    if (!local) return note({ kind: 'key', name: k.name, result: 'skipped', reason: 'no key of that name here (key secrets are never synced)' });
    if (same([local.scopes, local.isActive, local.dailyRequestLimit, local.tokenLimits], [k.scopes, k.isActive, k.dailyRequestLimit, k.tokenLimits])) return void report.unchanged++;
    if ((keyStamps.get(local.id) ?? '') >= k.updatedAt) return note({ kind: 'key', name: k.name, result: 'kept-local', reason: 'changed here more recently' });
    services.keys.update(local.id, { scopes: k.scopes, isActive: k.isActive, dailyRequestLimit: k.dailyRequestLimit, tokenLimits: k.tokenLimits as never });
    note({ kind: 'key', name: k.name, result: 'updated' });
  });
  applySettings(services, snap, overwriteCredentials, report);
  return report;
}

function applyConnection(services: Services, c: SyncSnapshot['connections'][number], secret: string, overwrite: boolean, report: SyncReport): void {
  const name = `${c.provider}/${c.name}`;
  let provider = c.provider;
  if (provider.startsWith(NODE_PROVIDER)) {
    const node = services.nodes.byPrefix(provider.slice(NODE_PROVIDER.length));
    if (!node) throw new Error(`node ${provider.slice(NODE_PROVIDER.length)} is not here`);
    provider = node.id;
  } else if (!services.providers.provider(provider)) throw new Error(`unknown provider ${provider}`);
  const local = services.connections.list().find((x: Connection) => x.provider === provider && x.name === c.name);
  const secrets = overwrite ? unseal<{ credential: Credential; providerSpecificData: Record<string, unknown> }>(secret, c.secrets) : undefined;
  const meta = { priority: c.priority, isActive: c.isActive, expiresAt: c.expiresAt };
  if (!local) {
    if (secrets) {
      const made = services.connections.create({ provider, name: c.name, authKind: c.authKind as AuthKind, credential: secrets.credential, providerSpecificData: secrets.providerSpecificData, ...meta });
      services.connections.update(made.id, { updatedAt: c.updatedAt });
      return void report.changes.push({ kind: 'connection', name, result: 'created' });
    }
    const made = services.connections.create({ provider, name: c.name, authKind: c.authKind as AuthKind, credential: {}, priority: c.priority, isActive: false });
    // The remote's time, not now: a later sync with overwriteCredentials on fills this placeholder in.
    services.connections.update(made.id, { lastError: NEEDS_REENTRY, updatedAt: c.updatedAt });
    return void report.changes.push({ kind: 'connection', name, result: 'created', reason: 'inactive: credentials need re-entry (overwriteCredentials is off)' });
  }
  const placeholder = local.lastError === NEEDS_REENTRY;
  if (placeholder && !secrets) return void report.unchanged++;
  const differs = placeholder || !same([local.priority, local.isActive, local.expiresAt], [c.priority, c.isActive, c.expiresAt]) ||
    (secrets !== undefined && !same([local.credential, local.providerSpecificData], [secrets.credential, secrets.providerSpecificData]));
  if (!differs) return void report.unchanged++;
  if (!placeholder && local.updatedAt >= c.updatedAt) return void report.changes.push({ kind: 'connection', name, result: 'kept-local', reason: 'changed here more recently' });
  const filled = placeholder ? { lastError: null } : {};
  services.connections.update(local.id, {
    ...(secrets ? { ...meta, credential: secrets.credential, providerSpecificData: secrets.providerSpecificData, authKind: c.authKind as AuthKind } : meta),
    ...filled,
    updatedAt: c.updatedAt,
  });
  report.changes.push({ kind: 'connection', name, result: 'updated', ...(secrets ? {} : { reason: 'credentials kept (overwriteCredentials is off)' }) });
}

function applySettings(services: Services, snap: SyncSnapshot, overwrite: boolean, report: SyncReport): void {
  const stamps = settingTimes(services);
  const current = services.settings.get() as Record<string, unknown>;
  const patch: Record<string, unknown> = {};
  for (const [key, { value, updatedAt }] of Object.entries(snap.settings)) {
    if (LOCAL_SETTINGS.has(key) || !(key in current)) continue;
    if (same(current[key], value)) {
      report.unchanged++;
      continue;
    }
    if (CREDENTIAL_SETTINGS.has(key) && !overwrite) {
      report.changes.push({ kind: 'setting', name: key, result: 'skipped', reason: 'a credential (overwriteCredentials is off)' });
      continue;
    }
    if ((stamps.get(key) ?? '') >= updatedAt) {
      report.changes.push({ kind: 'setting', name: key, result: 'kept-local', reason: 'changed here more recently' });
      continue;
    }
    const one = settingsPatchSchema.safeParse({ [key]: value });
    if (!one.success) {
      report.changes.push({ kind: 'setting', name: key, result: 'skipped', reason: 'value not valid here' });
      continue;
    }
    Object.assign(patch, one.data);
    report.changes.push({ kind: 'setting', name: key, result: 'updated' });
  }
  if (Object.keys(patch).length) services.settings.update(patch as Partial<Settings>);
}
