import { createCipheriv, createDecipheriv, randomBytes, scrypt, type ScryptOptions } from 'node:crypto';

/**
 * The secret key travels in an export only wrapped with a passphrase the user chooses: scrypt derives a
 * 256-bit key from it (N=2^15, r=8, p=1: about 0.1 s and 32 MiB, so guessing is slow), and AES-256-GCM
 * seals the secret key with it. A wrong passphrase fails the GCM tag check; it never yields a wrong key.
 */

/** The wrapped key as stored in an export's `router_export` table (JSON). */
export interface WrappedKey {
  v: 1;
  kdf: 'scrypt';
  N: number;
  r: number;
  p: number;
  salt: string;
  iv: string;
  tag: string;
  ct: string;
}

const PARAMS = { N: 1 << 15, r: 8, p: 1 } as const;
/** Passphrases shorter than this are refused: the wrapped key may leave the machine. */
export const MIN_PASSPHRASE_LENGTH = 8;

function derive(passphrase: string, salt: Buffer, params: { N: number; r: number; p: number }): Promise<Buffer> {
  const options: ScryptOptions = { ...params, maxmem: 256 * params.N * params.r + 1024 * 1024 };
  return new Promise((resolve, reject) =>
    scrypt(passphrase.normalize('NFC'), salt, 32, options, (err, key) => (err ? reject(err) : resolve(key))),
  );
}

/** Seals `key` with `passphrase` (scrypt + AES-256-GCM). */
export async function wrapKey(key: Buffer, passphrase: string): Promise<WrappedKey> {
  const salt = randomBytes(16);
  const iv = randomBytes(12);
  const kek = await derive(passphrase, salt, PARAMS);
  const cipher = createCipheriv('aes-256-gcm', kek, iv);
  cipher.setAAD(Buffer.from('router-export-key'));
  const ct = Buffer.concat([cipher.update(key), cipher.final()]);
  const b64 = (b: Buffer) => b.toString('base64url');
  return { v: 1, kdf: 'scrypt', ...PARAMS, salt: b64(salt), iv: b64(iv), tag: b64(cipher.getAuthTag()), ct: b64(ct) };
}

/** Opens a wrapped key; undefined when the passphrase is wrong or the record is damaged or foreign. */
export async function unwrapKey(wrapped: unknown, passphrase: string): Promise<Buffer | undefined> {
  const w = wrapped as Partial<WrappedKey> | null;
  if (!w || w.v !== 1 || w.kdf !== 'scrypt') return undefined;
  const { N, r, p } = w;
  // Bounds keep a crafted file from asking scrypt for gigabytes of memory.
  if (!Number.isInteger(N) || !Number.isInteger(r) || !Number.isInteger(p) || N! > 1 << 20 || r! > 16 || p! > 4 || N! < 2) return undefined;
  try {
    const kek = await derive(passphrase, Buffer.from(w.salt ?? '', 'base64url'), { N: N!, r: r!, p: p! });
    const decipher = createDecipheriv('aes-256-gcm', kek, Buffer.from(w.iv ?? '', 'base64url'));
    decipher.setAAD(Buffer.from('router-export-key'));
    decipher.setAuthTag(Buffer.from(w.tag ?? '', 'base64url'));
    const key = Buffer.concat([decipher.update(Buffer.from(w.ct ?? '', 'base64url')), decipher.final()]);
    return key.length === 32 ? key : undefined;
  } catch {
    return undefined;
  }
}
