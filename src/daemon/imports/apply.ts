/**
 * Turns imported accounts into provider connections through the connection store (credentials encrypted at
 * rest there). Importing the same account again refreshes its connection instead of adding a duplicate: a
 * connection remembers where it came from in `providerSpecificData.importedFrom`.
 */

import { createHmac, hkdfSync } from 'node:crypto';
import { RouterError } from '../http/errors.js';
import { publicConnection } from '../providers/connections.js';
import type { Services } from '../services.js';
import { loadSecretKey } from '../store/secrets.js';
import type { ParsedAccount } from './formats.js';

/** The reply shape of one imported connection (secrets masked). */
export type ImportedConnection = ReturnType<typeof publicConnection> & { created: boolean };

/** A key for hashes that must not be reversible offline, derived from the state folder's secret key. */
function hashKey(services: Services): Buffer {
  return Buffer.from(hkdfSync('sha256', loadSecretKey(services.paths.secretKey), Buffer.alloc(0), 'router credential-import fingerprint', 32));
}

/**
 * A fingerprint of one importable account: HMAC-SHA256 (keyed with a secret only this router holds) over
 * where it lives and its tokens. It changes whenever the tokens do and reveals nothing about them.
 */
export function fingerprint(services: Services, service: string, account: string, parsed: ParsedAccount): string {
  const mac = createHmac('sha256', hashKey(services));
  for (const part of [service, account, parsed.provider, parsed.accessToken, parsed.refreshToken ?? '']) mac.update(`${part.length}:${part}`);
  return mac.digest('base64url').slice(0, 32);
}

/** True when router has this provider (new providers arrive with their OAuth flows). */
export function providerKnown(services: Services, provider: string): boolean {
  return services.providers.provider(provider) !== undefined;
}

/**
 * Creates (or refreshes) the connection for one account. `origin` identifies the account across imports
 * (`<service>:<account>` for discovered ones, the email or token hash for uploaded token files).
 */
export async function importAccount(services: Services, parsed: ParsedAccount, origin: string): Promise<ImportedConnection> {
  const def = services.providers.provider(parsed.provider);
  if (!def) throw new RouterError(400, `Provider '${parsed.provider}' is not available in this router.`, { extra: { param: 'provider' } });
  const credential = { accessToken: parsed.accessToken, ...(parsed.refreshToken ? { refreshToken: parsed.refreshToken } : {}) };
  const existing = services.connections.list().find((c) => c.provider === def.id && c.providerSpecificData.importedFrom === origin);
  const providerSpecificData = { ...(existing?.providerSpecificData ?? {}), ...parsed.providerSpecificData, importedFrom: origin };
  const label = (id: string) => services.providers.label(id);
  // The same tokens imported again (a second `router setup`): nothing to change.
  const same = existing?.isActive && existing.credential.accessToken === credential.accessToken && existing.credential.refreshToken === credential.refreshToken && existing.expiresAt === (parsed.expiresAt ?? null);
  if (existing && same) return { ...publicConnection(existing, label), created: false };
  if (existing) {
    const next = await services.connections.update(existing.id, {
      authKind: 'oauth',
      credential,
      expiresAt: parsed.expiresAt ?? null,
      providerSpecificData,
      isActive: true,
      testStatus: null,
      lastError: null,
    });
    // Gone meanwhile (removed on another node): the import makes a new connection below.
    if (next) return { ...publicConnection(next, label), created: false };
  }
  const c = await services.connections.create({
    provider: def.id,
    name: `${def.name}: ${parsed.label}`.slice(0, 100),
    authKind: 'oauth',
    credential,
    expiresAt: parsed.expiresAt ?? null,
    providerSpecificData,
  });
  return { ...publicConnection(c, label), created: true };
}

/** The origin of an uploaded token file: its email, else a keyed hash of its refresh (or access) token. */
export function fileOrigin(services: Services, parsed: ParsedAccount): string {
  const email = parsed.providerSpecificData.email;
  if (typeof email === 'string') return `token-file:${email}`;
  const mac = createHmac('sha256', hashKey(services)).update(parsed.refreshToken ?? parsed.accessToken);
  return `token-file:${mac.digest('base64url').slice(0, 22)}`;
}
