import { createHash, timingSafeEqual } from 'node:crypto';
import { decryptSecret, encryptSecret } from '../store/secrets.js';
import type { Services } from '../services.js';

/**
 * The note vault's WebDAV credentials (docs/vault.md): one row of the settings table, `obsidianWebdav`,
 * whose value is `{"enc": ...}`, the whole `{username, password, enabled}` sealed with the state folder's
 * key under the context `setting:obsidianWebdav`. The settings store keeps such rows of keys it does not
 * know in its snapshot (read here without storage access, refreshed when another cluster node writes), and
 * backups/rekey.ts re-seals (or drops) every `{"enc"}` settings row on import, so this row needs nothing more.
 */
export const VAULT_SETTING = 'obsidianWebdav';
const CONTEXT = `setting:${VAULT_SETTING}`;

export interface VaultCredentials {
  username: string;
  password: string;
  enabled: boolean;
}

/** Opened credentials per daemon with the stored value they came from: opened again only when it changes. */
const cache = new WeakMap<Services, { stored: string | undefined; creds: VaultCredentials | null }>();

export function loadCredentials(services: Services): VaultCredentials | null {
  const stored = services.settings.extraRow(VAULT_SETTING);
  const cached = cache.get(services);
  if (cached && cached.stored === stored) return cached.creds;
  let creds: VaultCredentials | null = null;
  if (stored !== undefined) {
    try {
      const enc = (JSON.parse(stored) as { enc?: unknown }).enc;
      if (typeof enc === 'string') creds = JSON.parse(decryptSecret(enc, services.paths.secretKey, CONTEXT)) as VaultCredentials;
    } catch {
      creds = null; // unreadable (key file changed): the vault stays closed until credentials are set again
    }
  }
  cache.set(services, { stored, creds });
  return creds;
}

export async function saveCredentials(services: Services, creds: VaultCredentials): Promise<void> {
  const value = JSON.stringify({ enc: encryptSecret(JSON.stringify(creds), services.paths.secretKey, CONTEXT) });
  await services.settings.putExtraRow(VAULT_SETTING, value);
  cache.set(services, { stored: value, creds });
}

export function deleteCredentials(services: Services): Promise<boolean> {
  return services.settings.removeExtraRow(VAULT_SETTING);
}

const sha256 = (s: string) => createHash('sha256').update(s, 'utf8').digest();

/** Constant-time equality of two strings whatever their lengths: both sides hashed, then compared. */
function sameSecret(given: string, expected: string): boolean {
  return timingSafeEqual(sha256(given), sha256(expected));
}

/**
 * True when an Authorization header carries the vault's Basic credentials. Username and password are
 * both compared (no early exit on the first mismatch, none on length: hashes have one length).
 */
export function basicAuthOk(header: string | null, creds: VaultCredentials): boolean {
  let user = '';
  let pass = '';
  let wellFormed = false;
  if (header && /^basic\s+/i.test(header)) {
    const decoded = Buffer.from(header.replace(/^basic\s+/i, '').trim(), 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    if (colon !== -1) {
      wellFormed = true;
      user = decoded.slice(0, colon);
      pass = decoded.slice(colon + 1);
    }
  }
  const userOk = sameSecret(user, creds.username);
  const passOk = sameSecret(pass, creds.password);
  return wellFormed && userOk && passOk;
}
