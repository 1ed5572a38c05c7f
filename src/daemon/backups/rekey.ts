import { randomBytes } from 'node:crypto';
import { decryptWithKey, encryptWithKey } from '../store/secrets.js';
import type { Db } from '../store/db.js';
import { QDRANT_KEY_CONTEXT } from '../memory/settings.js';

/** What happened to the encrypted values of an imported database. */
export interface RekeyCounts {
  /** Readable with this machine's key already (a backup of this same state folder). */
  kept: number;
  /** Opened with the export's own key (passphrase given) and sealed again with this machine's key. */
  reencrypted: number;
  /** Neither: the value is dropped and its owner marked as needing new credentials. */
  needReentry: number;
}

/** Test status of a connection whose credentials did not survive an import without the secret key. */
export const NEEDS_CREDENTIALS = 'needs_credentials';
const REENTRY_MESSAGE = 'credentials need re-entry: the database was imported without its secret key';

/**
 * Every encrypted value of a database, with the associated-data context it was sealed under (see
 * store/secrets.ts). A new encrypted column must be added here, or imports would carry it unreadable.
 */
function* encryptedValues(db: Db): Generator<{ kind: 'connection' | 'webhook' | 'setting' | 'memory'; id: string; enc: string; context: string }> {
  for (const r of db.prepare('SELECT id, secrets_enc FROM provider_connections WHERE secrets_enc IS NOT NULL').all() as Array<{ id: string; secrets_enc: string }>) {
    yield { kind: 'connection', id: r.id, enc: r.secrets_enc, context: `connection:${r.id}` };
  }
  for (const r of db.prepare('SELECT id, secret_enc FROM webhooks').all() as Array<{ id: string; secret_enc: string }>) {
    yield { kind: 'webhook', id: r.id, enc: r.secret_enc, context: `webhook:${r.id}` };
  }
  for (const r of db.prepare('SELECT key, value FROM settings').all() as Array<{ key: string; value: string }>) {
    let value: unknown;
    try {
      value = JSON.parse(r.value);
    } catch {
      continue;
    }
    const enc = (value as { enc?: unknown } | null)?.enc;
    if (typeof enc === 'string') yield { kind: 'setting', id: r.key, enc, context: `setting:${r.key}` };
  }
  const memory = db.prepare('SELECT value FROM memory_settings WHERE id = 1').get() as { value: string } | undefined;
  const sealed = memory ? memoryKeyOf(memory.value) : undefined;
  if (sealed) yield { kind: 'memory', id: 'qdrantApiKey', enc: sealed, context: QDRANT_KEY_CONTEXT };
}

/** The sealed Qdrant API key in the memory settings document, when there is one. */
function memoryKeyOf(value: string): string | undefined {
  try {
    const enc = (JSON.parse(value) as { qdrantApiKey?: { enc?: unknown } } | null)?.qdrantApiKey?.enc;
    return typeof enc === 'string' ? enc : undefined;
  } catch {
    return undefined;
  }
}

/** Puts `qdrantApiKey` (sealed, or null) back into the memory settings document. */
function setMemoryKey(db: Db, sealed: string | null): void {
  const row = db.prepare('SELECT value FROM memory_settings WHERE id = 1').get() as { value: string };
  const doc = JSON.parse(row.value) as Record<string, unknown>;
  doc.qdrantApiKey = sealed === null ? null : { enc: sealed };
  db.prepare('UPDATE memory_settings SET value = ? WHERE id = 1').run(JSON.stringify(doc));
}

function tryOpen(enc: string, key: Buffer | undefined, context: string): string | undefined {
  if (!key) return undefined;
  try {
    return decryptWithKey(enc, key, context);
  } catch {
    return undefined;
  }
}

/**
 * Makes every secret of an imported database readable with `local` (this state folder's key), or marks
 * it as needing re-entry: never leaves a value no key can open. Connections without credentials become
 * inactive with test status `needs_credentials`; webhooks get a fresh random secret and are disabled (a
 * receiver would reject the old signature anyway); secret settings fall back to unset.
 */
export function rekeySecrets(db: Db, local: Buffer, imported: Buffer | undefined): RekeyCounts {
  const counts: RekeyCounts = { kept: 0, reencrypted: 0, needReentry: 0 };
  const now = new Date().toISOString();
  db.transaction(() => {
    for (const v of [...encryptedValues(db)]) {
      if (tryOpen(v.enc, local, v.context) !== undefined) {
        counts.kept++;
        continue;
      }
      const plain = tryOpen(v.enc, imported, v.context);
      if (plain !== undefined) {
        const sealed = encryptWithKey(plain, local, v.context);
        if (v.kind === 'connection') db.prepare('UPDATE provider_connections SET secrets_enc = ? WHERE id = ?').run(sealed, v.id);
        else if (v.kind === 'webhook') db.prepare('UPDATE webhooks SET secret_enc = ? WHERE id = ?').run(sealed, v.id);
        else if (v.kind === 'memory') setMemoryKey(db, sealed);
        else db.prepare('UPDATE settings SET value = ? WHERE key = ?').run(JSON.stringify({ enc: sealed }), v.id);
        counts.reencrypted++;
        continue;
      }
      counts.needReentry++;
      if (v.kind === 'connection') {
        db.prepare('UPDATE provider_connections SET secrets_enc = NULL, is_active = 0, test_status = ?, last_error = ?, updated_at = ? WHERE id = ?').run(
          NEEDS_CREDENTIALS,
          REENTRY_MESSAGE,
          now,
          v.id,
        );
      } else if (v.kind === 'webhook') {
        const fresh = encryptWithKey(randomBytes(32).toString('base64url'), local, v.context);
        db.prepare('UPDATE webhooks SET secret_enc = ?, enabled = 0, updated_at = ? WHERE id = ?').run(fresh, now, v.id);
      } else if (v.kind === 'memory') {
        setMemoryKey(db, null);
      } else {
        db.prepare('DELETE FROM settings WHERE key = ?').run(v.id);
      }
    }
  })();
  return counts;
}
