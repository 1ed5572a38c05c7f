import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/** A PKCE pair (RFC 7636, S256): the verifier stays on the server, the challenge goes in the URL. */
export interface Pkce {
  verifier: string;
  challenge: string;
}

/** A fresh S256 PKCE pair: 32 random bytes as the verifier (43 base64url characters). */
export function newPkce(): Pkce {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

/** An unguessable `state` value for one login (also the handle the client polls with). */
export function newState(): string {
  return randomBytes(24).toString('base64url');
}

/** Constant-time string equality (state values compared where a caller supplies them). */
export function sameSecret(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}
