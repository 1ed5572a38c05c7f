import { createCipheriv, createDecipheriv, createHmac, hkdfSync, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Sealed } from '../../shared/sync.js';

/** `sha256=<hex HMAC-SHA256 of body>` keyed by the shared secret: the X-Cloud-Sig value. */
export function signSync(secret: string, body: string): string {
  return `sha256=${createHmac('sha256', secret).update(body, 'utf8').digest('hex')}`;
}

/** True when `header` is the signature of exactly `body` (constant-time; any malformed header is false). */
export function verifySync(secret: string, body: string, header: string | null | undefined): boolean {
  if (!secret || typeof header !== 'string') return false;
  const expected = Buffer.from(signSync(secret, body), 'utf8');
  const given = Buffer.from(header.trim(), 'utf8');
  return given.length === expected.length && timingSafeEqual(given, expected);
}

/** The sealing key: derived from the shared secret, distinct from the signing use. */
function sealKey(secret: string): Buffer {
  return Buffer.from(hkdfSync('sha256', secret, 'router-cloud-sync', 'credentials/v1', 32));
}

/** Seals a JSON value for the wire (AES-256-GCM): only a holder of the shared secret can open it. */
export function seal(secret: string, value: unknown): Sealed {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', sealKey(secret), iv);
  const data = Buffer.concat([cipher.update(JSON.stringify(value), 'utf8'), cipher.final()]);
  return { sealed: Buffer.concat([iv, cipher.getAuthTag(), data]).toString('base64') };
}

/** Opens a sealed value; throws when it was sealed with another secret or altered. */
export function unseal<T>(secret: string, box: Sealed): T {
  const raw = Buffer.from(box.sealed, 'base64');
  const decipher = createDecipheriv('aes-256-gcm', sealKey(secret), raw.subarray(0, 12));
  decipher.setAuthTag(raw.subarray(12, 28));
  return JSON.parse(Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString('utf8')) as T;
}

/** What the X-Cloud-Sync-Auth header of a request states (verified by `verifyRequestAuth`). */
export interface RequestAuth {
  nonce: string;
  sentAt: number;
  length: number;
}

const AUTH_RE = /^nonce=([0-9a-f]{32});sent=(\d{1,15});length=(\d{1,12});sha256=([0-9a-f]{64})$/;
const authMac = (secret: string, a: RequestAuth) =>
  createHmac('sha256', secret).update(`router-sync-request/2\n${a.nonce}\n${a.sentAt}\n${a.length}`, 'utf8').digest('hex');

/** A fresh random nonce for one request. */
export const newNonce = (): string => randomBytes(16).toString('hex');

/** The X-Cloud-Sync-Auth value of a request: nonce, time and body length, signed. */
export function signRequestAuth(secret: string, a: RequestAuth): string {
  return `nonce=${a.nonce};sent=${a.sentAt};length=${a.length};sha256=${authMac(secret, a)}`;
}

/** The request's stated nonce, time and length when the header is well formed and signed with `secret` (constant time); else null. */
export function verifyRequestAuth(secret: string, header: string | null | undefined): RequestAuth | null {
  const m = secret && typeof header === 'string' ? AUTH_RE.exec(header.trim()) : null;
  if (!m) return null;
  const a: RequestAuth = { nonce: m[1]!, sentAt: Number(m[2]), length: Number(m[3]) };
  const expected = Buffer.from(authMac(secret, a), 'utf8');
  const given = Buffer.from(m[4]!, 'utf8');
  return given.length === expected.length && timingSafeEqual(given, expected) ? a : null;
}
