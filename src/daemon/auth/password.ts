import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto';
import type { Db } from '../store/db.js';

const PARAMS = { N: 16384, r: 8, p: 1 };
const KEYLEN = 64;

function scryptAsync(password: string, salt: Buffer, opts: ScryptOptions): Promise<Buffer> {
  return new Promise((resolve, reject) =>
    scrypt(password, salt, KEYLEN, opts, (err, key) => (err ? reject(err) : resolve(key))),
  );
}

/** Hashes a password with scrypt (slow by design, run off the event loop by libuv). */
export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const key = await scryptAsync(password, salt, PARAMS);
  return `scrypt$${PARAMS.N}$${PARAMS.r}$${PARAMS.p}$${salt.toString('base64')}$${key.toString('base64')}`;
}

/** Checks a password against a stored hash in constant time. */
export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const [scheme, n, r, p, salt, hash] = stored.split('$');
  if (scheme !== 'scrypt' || !salt || !hash) return false;
  const expected = Buffer.from(hash, 'base64');
  const key = await scryptAsync(password, Buffer.from(salt, 'base64'), { N: Number(n), r: Number(r), p: Number(p) });
  return key.length === expected.length && timingSafeEqual(key, expected);
}

/** The dashboard password (one per installation). */
export class PasswordStore {
  constructor(private readonly db: Db) {}

  isSet(): boolean {
    return this.db.prepare('SELECT 1 FROM auth_password WHERE id = 1').get() !== undefined;
  }

  async set(password: string): Promise<void> {
    const hash = await hashPassword(password);
    this.db
      .prepare(
        'INSERT INTO auth_password (id, hash, updated_at) VALUES (1, ?, ?) ON CONFLICT(id) DO UPDATE SET hash = excluded.hash, updated_at = excluded.updated_at',
      )
      .run(hash, new Date().toISOString());
  }

  async verify(password: string): Promise<boolean> {
    const row = this.db.prepare('SELECT hash FROM auth_password WHERE id = 1').get() as { hash: string } | undefined;
    if (!row) {
      // Spend the same time as a real check so "no password set" is not distinguishable by timing.
      await hashPassword(password);
      return false;
    }
    return verifyPassword(password, row.hash);
  }
}
