import { z } from 'zod';
import type { Sealed, SyncChange, SyncReport } from '../../shared/sync.js';
import { checkCombo, comboBody } from '../combos/validate.js';
import { tokenLimits as tokenLimitsSchema } from '../keys/routes.js';
import { normalizeScopes, SCOPE_RE } from '../keys/store.js';
import type { Connection } from '../providers/connections.js';
import { normalizeNodeBaseUrl } from '../providers/nodes.js';
import { createNode } from '../providers/routes.js';
import type { AuthKind, Credential } from '../providers/types.js';
import type { Services } from '../services.js';
import { settingsPatchSchema, type Settings } from '../settings/store.js';
import { unseal } from './signature.js';
import { keyTimes, NODE_PROVIDER, nodeSecretsSchema, type WireSnapshot } from './snapshot.js';
import { CREDENTIAL_SETTINGS, endpointData, LOCAL_SETTINGS, needsTrust, SECURITY_SETTINGS } from './trust.js';

/**
 * The merge of a remote's snapshot (already verified and shape-checked) into this router.
 *
 * Records are matched by what a person names them (connection: provider + name; node: prefix; combo and
 * key: name), never by id: ids are random per machine. Merge rules (docs/operations.md):
 * - equal content: unchanged;
 * - missing here: created;
 * - different: the side changed last (updatedAt) wins; a newer local record is kept and reported;
 * - nothing is deleted by a sync;
 * - credentials travel sealed and are applied only with `overwriteCredentials`; without it a new connection
 *   arrives inactive, marked "credentials need re-entry";
 * - what decides who gets in and where credentials and prompts go (trust.ts) is applied only with
 *   `applySecurityChanges`; a record with such a change is skipped whole (reported), so turning the opt-in
 *   on later and syncing again applies it.
 * Every change takes effect at once: the stores notify their caches (nodes refresh the provider directory).
 */

export interface ApplyOptions {
  secret: string;
  overwriteCredentials: boolean;
  applySecurityChanges: boolean;
}

/** lastError of a connection a sync created without its credentials, or without its endpoint. */
const NEEDS_REENTRY = 'credentials need re-entry (synced without overwriteCredentials)';
const NEEDS_TRUST = 'endpoint not applied (synced without applySecurityChanges)';
const PLACEHOLDERS: ReadonlySet<string> = new Set([NEEDS_REENTRY, NEEDS_TRUST]);

/** Opens a sealed value of the snapshot; one that does not open with the shared secret skips its record. */
function open<T>(secret: string, box: Sealed): T {
  try {
    return unseal<T>(secret, box);
  } catch {
    throw new Error('a sealed value does not open with the shared secret');
  }
}

const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);
const sortedScopes = (s: readonly string[]) => [...normalizeScopes(s)].sort();
const scopesSchema = z.array(z.string().regex(SCOPE_RE)).max(20);

/** Applies a remote snapshot and reports record by record. */
export async function applySnapshot(services: Services, snap: WireSnapshot, opts: ApplyOptions): Promise<SyncReport> {
  const report: SyncReport = { changes: [], unchanged: 0 };
  const note = (c: SyncChange) => report.changes.push(c);
  const guarded = async (kind: SyncChange['kind'], name: string, fn: () => unknown) => {
    try {
      await fn();
    } catch (err) {
      const reason = err instanceof z.ZodError ? `invalid record: ${err.issues[0]?.path.join('.') || 'value'} ${err.issues[0]?.message ?? ''}`.trim() : err instanceof Error ? err.message : 'invalid record';
      note({ kind, name, result: 'skipped', reason });
    }
  };
  // Nodes first: connections and combos may refer to them (the node store refreshes the directory).
  for (const n of snap.nodes) await guarded('node', n.prefix, () => applyNode(services, n, opts, report));
  for (const c of snap.connections) await guarded('connection', `${c.provider}/${c.name}`, () => applyConnection(services, c, opts, report));
  for (const c of snap.combos) await guarded('combo', c.name, async () => {
    const local = services.combos.byName(c.name);
    // Fields a peer older than them does not send take their defaults.
    const routing = { affinity: c.affinity ?? 'off', hedgeAfterMs: c.hedgeAfterMs ?? null, midStreamRecovery: c.midStreamRecovery ?? null, contextFit: c.contextFit ?? false };
    const mine = local && { affinity: local.affinity, hedgeAfterMs: local.hedgeAfterMs, midStreamRecovery: local.midStreamRecovery, contextFit: local.contextFit };
    if (local && same([local.strategy, local.models, local.targetTimeoutMs, mine], [c.strategy, c.models, c.targetTimeoutMs, routing])) return void report.unchanged++;
    if (local && local.updatedAt >= c.updatedAt) return note({ kind: 'combo', name: c.name, result: 'kept-local', reason: 'changed here more recently' });
    const body = comboBody.parse({ name: c.name, strategy: c.strategy, models: c.models, targetTimeoutMs: c.targetTimeoutMs, ...routing });
    if (local) await services.combos.update(local.id, checkCombo(body, services, local.id));
    else await services.combos.create(checkCombo(body, services));
    note({ kind: 'combo', name: c.name, result: local ? 'updated' : 'created' });
  });
  const keyStamps = keyTimes(services);
  for (const k of snap.keys) await guarded('key', k.name, async () => {
    const local = services.keys.list().find((x) => x.name === k.name);
    if (!local) return note({ kind: 'key', name: k.name, result: 'skipped', reason: 'no key of that name here (key secrets are never synced)' });
    const scopes = scopesSchema.parse(k.scopes);
    const limits = tokenLimitsSchema.parse(k.tokenLimits);
    const scopesChange = !same(sortedScopes(local.scopes), sortedScopes(scopes));
    const otherChange = !same([local.isActive, local.dailyRequestLimit, local.tokenLimits], [k.isActive, k.dailyRequestLimit, limits]);
    if (!scopesChange && !otherChange) return void report.unchanged++;
    if ((keyStamps.get(local.id) ?? '') >= k.updatedAt) return note({ kind: 'key', name: k.name, result: 'kept-local', reason: 'changed here more recently' });
    // Scopes widen or narrow what the key may do; turning a key back on undoes a revocation.
    const held = [scopesChange && 'its scopes', !local.isActive && k.isActive && 'turning it back on'].filter(Boolean).join(' and ');
    if (held && !opts.applySecurityChanges) return note({ kind: 'key', name: k.name, result: 'skipped', reason: needsTrust(held) });
    await services.keys.update(local.id, { scopes, isActive: k.isActive, dailyRequestLimit: k.dailyRequestLimit, tokenLimits: limits });
    note({ kind: 'key', name: k.name, result: 'updated' });
  });
  await applySettings(services, snap, opts, report);
  return report;
}

async function applyNode(services: Services, n: WireSnapshot['nodes'][number], opts: ApplyOptions, report: SyncReport): Promise<void> {
  const sealed = nodeSecretsSchema.parse(open(opts.secret, n.secrets));
  // The same rules as a node made by hand (prefix grammar, http(s) URL, no framing headers).
  const { baseUrl, customHeaders = {}, prefix, ...plain } = createNode.parse({
    name: n.name, prefix: n.prefix, type: n.type, baseUrl: sealed.baseUrl, apiType: n.apiType, completions: n.completions, rerankFormat: n.rerankFormat, customHeaders: sealed.customHeaders,
  });
  const local = services.nodes.byPrefix(prefix);
  const note = (result: SyncChange['result'], reason?: string) => void report.changes.push({ kind: 'node', name: n.prefix, result, ...(reason ? { reason } : {}) });
  if (!local) {
    // A new node is a new place prompts (through combos) and keys (through its connections) may be sent.
    if (!opts.applySecurityChanges) return note('skipped', needsTrust('a new endpoint'));
    if (services.providers.provider(prefix)) throw new Error(`prefix ${prefix} is already a provider id, alias or prefix here`);
    const withHeaders = opts.overwriteCredentials || Object.keys(customHeaders).length === 0;
    await services.nodes.create({ ...plain, prefix, baseUrl, customHeaders: withHeaders ? customHeaders : {} });
    return note('created', withHeaders ? undefined : 'custom headers not applied (overwriteCredentials is off)');
  }
  const urlChange = local.baseUrl !== normalizeNodeBaseUrl(plain.type, baseUrl);
  const headersChange = !same(local.customHeaders, customHeaders);
  const plainChange = !same([local.name, local.type, local.apiType, local.completions, local.rerankFormat], [plain.name, plain.type, plain.apiType, plain.completions, plain.rerankFormat]);
  if (!urlChange && !headersChange && !plainChange) return void report.unchanged++;
  if (local.updatedAt >= n.updatedAt) return note('kept-local', 'changed here more recently');
  // The base URL receives every prompt and the key of each connection of the node.
  if (urlChange && !opts.applySecurityChanges) return note('skipped', needsTrust('its base URL'));
  if (headersChange && !opts.overwriteCredentials) return note('skipped', 'its custom headers may carry credentials: applied only with cloudSync.overwriteCredentials');
  await services.nodes.update(local.id, { ...plain, baseUrl, customHeaders });
  note('updated');
}

type SyncedConnection = WireSnapshot['connections'][number];
type Secrets = { credential: Credential; providerSpecificData: Record<string, unknown> };

async function applyConnection(services: Services, c: SyncedConnection, opts: ApplyOptions, report: SyncReport): Promise<void> {
  const name = `${c.provider}/${c.name}`;
  const note = (result: SyncChange['result'], reason?: string) => void report.changes.push({ kind: 'connection', name, result, ...(reason ? { reason } : {}) });
  let provider = c.provider;
  if (provider.startsWith(NODE_PROVIDER)) {
    const node = services.nodes.byPrefix(provider.slice(NODE_PROVIDER.length));
    if (!node) throw new Error(`node ${provider.slice(NODE_PROVIDER.length)} is not here`);
    provider = node.id;
  } else if (!services.providers.provider(provider)) throw new Error(`unknown provider ${provider}`);
  const local = services.connections.list().find((x: Connection) => x.provider === provider && x.name === c.name);
  const secrets = opts.overwriteCredentials ? open<Secrets>(opts.secret, c.secrets) : undefined;
  // Where the remote's connection sends its requests and credentials (base URL, token URL, proxy).
  const remoteEndpoint = secrets ? endpointData(secrets.providerSpecificData) : {};
  const meta = { priority: c.priority, isActive: c.isActive, expiresAt: c.expiresAt };
  if (!local) {
    const untrusted = Object.keys(remoteEndpoint).length > 0 && !opts.applySecurityChanges;
    if (secrets && !untrusted) {
      const made = await services.connections.create({ provider, name: c.name, authKind: c.authKind as AuthKind, credential: secrets.credential, providerSpecificData: secrets.providerSpecificData, ...meta });
      await services.connections.update(made.id, { updatedAt: c.updatedAt });
      return note('created');
    }
    const made = await services.connections.create({ provider, name: c.name, authKind: c.authKind as AuthKind, credential: {}, priority: c.priority, isActive: false });
    // The remote's time, not now: a later sync with the opt-in on fills this placeholder in.
    await services.connections.update(made.id, { lastError: untrusted ? NEEDS_TRUST : NEEDS_REENTRY, updatedAt: c.updatedAt });
    return note('created', untrusted
      ? `inactive: ${needsTrust(`its endpoint (${Object.keys(remoteEndpoint).join(', ')})`)}`
      : 'inactive: credentials need re-entry (overwriteCredentials is off)');
  }
  const placeholder = PLACEHOLDERS.has(local.lastError ?? '');
  if (placeholder && !secrets) return void report.unchanged++;
  const differs = placeholder || !same([local.priority, local.isActive, local.expiresAt], [c.priority, c.isActive, c.expiresAt]) ||
    (secrets !== undefined && !same([local.credential, local.providerSpecificData], [secrets.credential, secrets.providerSpecificData]));
  if (!differs) return void report.unchanged++;
  if (!placeholder && local.updatedAt >= c.updatedAt) return note('kept-local', 'changed here more recently');
  if (secrets && !opts.applySecurityChanges && !same(endpointData(local.providerSpecificData), remoteEndpoint)) {
    return note('skipped', needsTrust(`its endpoint (${Object.keys({ ...remoteEndpoint, ...endpointData(local.providerSpecificData) }).join(', ')})`));
  }
  await services.connections.update(local.id, {
    ...(secrets ? { ...meta, credential: secrets.credential, providerSpecificData: secrets.providerSpecificData, authKind: c.authKind as AuthKind } : meta),
    ...(placeholder ? { lastError: null } : {}),
    updatedAt: c.updatedAt,
  });
  note('updated', secrets ? undefined : 'credentials kept (overwriteCredentials is off)');
}

async function applySettings(services: Services, snap: WireSnapshot, opts: ApplyOptions, report: SyncReport): Promise<void> {
  const stamps = services.settings.updatedTimes();
  const current = services.settings.get() as Record<string, unknown>;
  const patch: Record<string, unknown> = {};
  const note = (name: string, result: SyncChange['result'], reason?: string) => report.changes.push({ kind: 'setting', name, result, ...(reason ? { reason } : {}) });
  for (const [key, entry] of Object.entries(snap.settings)) {
    if (LOCAL_SETTINGS.has(key) || !(key in current)) continue;
    let value = entry.value;
    if (CREDENTIAL_SETTINGS.has(key)) {
      const box = entry.value as Partial<Sealed> | null;
      if (typeof box?.sealed !== 'string') {
        note(key, 'skipped', 'a credential sent unsealed');
        continue;
      }
      try {
        value = open(opts.secret, box as Sealed);
      } catch (err) {
        note(key, 'skipped', (err as Error).message);
        continue;
      }
    }
    if (same(current[key], value)) {
      report.unchanged++;
      continue;
    }
    if (CREDENTIAL_SETTINGS.has(key) && !opts.overwriteCredentials) {
      note(key, 'skipped', 'a credential (overwriteCredentials is off)');
      continue;
    }
    if (key in SECURITY_SETTINGS && !opts.applySecurityChanges) {
      note(key, 'skipped', needsTrust(`a security setting (${SECURITY_SETTINGS[key]})`));
      continue;
    }
    if ((stamps.get(key) ?? '') >= entry.updatedAt) {
      note(key, 'kept-local', 'changed here more recently');
      continue;
    }
    const one = settingsPatchSchema().safeParse({ [key]: value });
    if (!one.success) {
      note(key, 'skipped', 'value not valid here');
      continue;
    }
    Object.assign(patch, one.data);
    note(key, 'updated');
  }
  if (Object.keys(patch).length) await services.settings.update(patch as Partial<Settings>);
}
