import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto';
import type { PasswordRepository } from './port.js';

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

/**
 * The dashboard password (one per installation), behind the `PasswordRepository` port. No snapshot: only
 * the login and password routes read it, straight from storage, so every cluster node checks the same one.
 */
export class PasswordStore {
  constructor(private readonly repo: PasswordRepository) {}

  async isSet(): Promise<boolean> {
    return (await this.repo.get()) !== undefined;
  }

  async set(password: string): Promise<void> {
    await this.repo.set(await hashPassword(password), new Date().toISOString());
  }

  async verify(password: string): Promise<boolean> {
    const stored = await this.repo.get();
    if (!stored) {
      // Spend the same time as a real check so "no password set" is not distinguishable by timing.
      await hashPassword(password);
      return false;
    }
    return verifyPassword(password, stored);
  }
}
