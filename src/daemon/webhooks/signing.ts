import { createHmac, randomBytes } from 'node:crypto';

/** A new webhook secret: `whsec_` and 48 lowercase hex characters (24 random bytes). */
export function generateSecret(): string {
  return `whsec_${randomBytes(24).toString('hex')}`;
}

/** The listed form of a secret: its first 10 characters followed by `...`. */
export function maskSecret(secret: string): string {
  return `${secret.slice(0, 10)}...`;
}

/** `sha256=<hex HMAC-SHA256 of the raw body keyed by the secret>`, the X-Webhook-Signature value. */
export function signBody(secret: string, rawBody: string): string {
  return `sha256=${createHmac('sha256', secret).update(rawBody, 'utf8').digest('hex')}`;
}
