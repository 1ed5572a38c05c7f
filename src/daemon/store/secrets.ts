import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { chmodSync, readFileSync, writeFileSync } from 'node:fs';

/**
 * Reversible encryption for secrets the daemon must use again later (webhook HMAC secrets, provider
 * credentials): a hash would not do, because the plain value is needed to sign or authenticate.
 *
 * AES-256-GCM with a 32-byte key kept in `secret.key` in the state folder (mode 0600), created on first use.
 * A stolen database alone therefore reveals no secret; the key file and the database together do, which is
 * the most a local daemon that must run unattended can offer.
 *
 * Encoded form: `v1.<iv>.<tag>.<ciphertext>`, each part base64url. The version prefix leaves room for key
 * rotation without guessing formats.
 */

const KEY_BYTES = 32;
const IV_BYTES = 12; // the GCM standard nonce size
const PREFIX = 'v1';

const keys = new Map<string, Buffer>();

/** Thrown when a value cannot be decrypted: wrong key file, edited ciphertext, or a foreign format. */
export class SecretError extends Error {
  override name = 'SecretError';
}

/**
 * Returns the key in `keyFile`, creating it (32 random bytes, mode 0600) when it does not exist yet.
 * Cached per path: the file is read once per process.
 */
export function loadSecretKey(keyFile: string): Buffer {
  const cached = keys.get(keyFile);
  if (cached) return cached;
  let key: Buffer;
  try {
    key = readFileSync(keyFile);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    key = randomBytes(KEY_BYTES);
    try {
      // 'wx' fails when another process created the file meanwhile; we then use theirs, so two daemons
      // (or a daemon and the CLI) starting together can never end up with different keys.
      writeFileSync(keyFile, key, { mode: 0o600, flag: 'wx' });
    } catch (writeErr) {
      if ((writeErr as NodeJS.ErrnoException).code !== 'EEXIST') throw writeErr;
      key = readFileSync(keyFile);
    }
  }
  if (key.length !== KEY_BYTES) {
    // Never replace a damaged key: that would silently make every stored secret unreadable.
    throw new SecretError(`secret key file has ${key.length} bytes, expected ${KEY_BYTES}`);
  }
  try {
    chmodSync(keyFile, 0o600);
  } catch {
    // best effort (e.g. a read-only mount); the file was created 0600 by us in the normal case
  }
  keys.set(keyFile, key);
  return key;
}

/**
 * Encrypts `plaintext` with the key in `keyFile`. `context` (e.g. `webhook:<id>`) is bound as associated
 * data, so a ciphertext copied to another row or purpose fails to decrypt instead of being accepted.
 */
export function encryptSecret(plaintext: string, keyFile: string, context = ''): string {
  return encryptWithKey(plaintext, loadSecretKey(keyFile), context);
}

/** `encryptSecret` with a key in hand (backups re-encrypt an imported database's secrets with this machine's key). */
export function encryptWithKey(plaintext: string, key: Buffer, context = ''): string {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  cipher.setAAD(Buffer.from(context, 'utf8'));
  const ct = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  return [PREFIX, iv.toString('base64url'), cipher.getAuthTag().toString('base64url'), ct.toString('base64url')].join('.');
}

/** Decrypts a value made by `encryptSecret` with the same key file and context; throws `SecretError` otherwise. */
export function decryptSecret(encoded: string, keyFile: string, context = ''): string {
  if (!encoded.startsWith(`${PREFIX}.`)) throw new SecretError('not an encrypted secret');
  // Loaded outside decryptWithKey's try: a missing or unreadable key file must say so.
  return decryptWithKey(encoded, loadSecretKey(keyFile), context);
}

/** `decryptSecret` with a key in hand; throws `SecretError` when the key or context does not match. */
export function decryptWithKey(encoded: string, key: Buffer, context = ''): string {
  const parts = encoded.split('.');
  if (parts.length !== 4 || parts[0] !== PREFIX) throw new SecretError('not an encrypted secret');
  const [, iv, tag, ct] = parts as [string, string, string, string];
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'));
    decipher.setAAD(Buffer.from(context, 'utf8'));
    decipher.setAuthTag(Buffer.from(tag, 'base64url'));
    return Buffer.concat([decipher.update(Buffer.from(ct, 'base64url')), decipher.final()]).toString('utf8');
  } catch {
    throw new SecretError('secret cannot be decrypted (wrong key file or damaged value)');
  }
}

/**
 * Makes `key` the key of `keyFile` for this process, without reading or writing the file: a cluster node
 * is given its key (ROUTER_SECRET_KEY or --secret-key-file, cluster/identity.ts) instead of keeping its own.
 */
export function setSecretKey(keyFile: string, key: Buffer): void {
  if (key.length !== KEY_BYTES) throw new SecretError(`secret key has ${key.length} bytes, expected ${KEY_BYTES}`);
  keys.set(keyFile, key);
}

/** Forgets cached keys (tests that delete and recreate state folders). */
export function clearSecretKeyCache(): void {
  keys.clear();
}
