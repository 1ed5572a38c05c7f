/**
 * Provider API keys that `router setup` found in its environment, as connections: one per variable
 * (remembered as `importedFrom: env:<variable>`), created once, updated when the key or base URL changed,
 * left alone when they did not (a second setup changes nothing). Each new or changed one is tested against
 * its upstream (an unchanged one reports its recorded verdict), so a key the upstream refuses is reported
 * with the upstream's reason while the others continue.
 */
import type { EnvCredential, EnvImportResult } from '../../shared/imports.js';
import { testConnection } from '../providers/health.js';
import type { Services } from '../services.js';

async function upsert(services: Services, cred: EnvCredential, dryRun: boolean): Promise<Omit<EnvImportResult, 'test'>> {
  const def = services.providers.provider(cred.provider);
  if (!def?.authKinds.includes('api-key')) return { variable: cred.variable, provider: cred.provider, connectionId: null, action: 'unsupported' };
  const origin = `env:${cred.variable}`;
  const existing = services.connections.list().find((c) => c.provider === def.id && c.providerSpecificData.importedFrom === origin);
  const base = { variable: cred.variable, provider: services.providers.publicId(def) };
  if (existing) {
    const sameBase = (existing.providerSpecificData.baseUrl ?? undefined) === cred.baseUrl;
    if (existing.credential.apiKey === cred.apiKey && sameBase && existing.isActive) return { ...base, connectionId: existing.id, action: 'unchanged' };
    if (dryRun) return { ...base, connectionId: existing.id, action: 'updated' };
    const { baseUrl: _old, ...data } = existing.providerSpecificData;
    await services.connections.update(existing.id, {
      authKind: 'api-key',
      credential: { apiKey: cred.apiKey },
      providerSpecificData: { ...data, ...(cred.baseUrl ? { baseUrl: cred.baseUrl } : {}) },
      isActive: true,
      testStatus: null,
      lastError: null,
    });
    return { ...base, connectionId: existing.id, action: 'updated' };
  }
  if (dryRun) return { ...base, connectionId: null, action: 'created' };
  const c = await services.connections.create({
    provider: def.id,
    name: `${def.name} (${cred.variable})`.slice(0, 100),
    authKind: 'api-key',
    credential: { apiKey: cred.apiKey },
    providerSpecificData: { importedFrom: origin, ...(cred.baseUrl ? { baseUrl: cred.baseUrl } : {}) },
  });
  return { ...base, connectionId: c.id, action: 'created' };
}

/**
 * Imports (or keeps) each credential, then tests each connection against its upstream, in order. A dry run
 * says what would happen and changes and tests nothing.
 */
export async function importEnvCredentials(services: Services, creds: EnvCredential[], dryRun = false): Promise<EnvImportResult[]> {
  const out: EnvImportResult[] = [];
  for (const cred of creds) {
    const r = await upsert(services, cred, dryRun);
    if (dryRun) {
      out.push({ ...r, test: null });
      continue;
    }
    const conn = r.connectionId ? services.connections.get(r.connectionId) : undefined;
    // An unchanged connection already tested keeps its verdict: a second setup writes nothing, not even a test time.
    if (conn && r.action === 'unchanged' && (conn.testStatus === 'ok' || conn.testStatus === 'error')) {
      out.push({ ...r, test: conn.testStatus === 'ok' ? { ok: true } : { ok: false, error: conn.lastError ?? 'refused' } });
      continue;
    }
    const test = conn ? await testConnection(services, conn) : null;
    out.push({ ...r, test: test ? (test.ok ? { ok: true } : { ok: false, error: test.error ?? 'refused' }) : null });
  }
  return out;
}
