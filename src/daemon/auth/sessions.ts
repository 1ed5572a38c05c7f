import { createHash, randomBytes } from 'node:crypto';
import type { Db } from '../store/db.js';

export const SESSION_TTL_MS = 7 * 24 * 3600 * 1000;

function hashToken(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

/**
 * Dashboard sessions behind the `auth_token` cookie. Only the sha256 of a cookie value is stored, so a
 * copy of the database does not hand out live sessions. Cached in memory; checked per request.
 */
export class SessionStore {
  private readonly live = new Map<string, number>();

  constructor(private readonly db: Db, private readonly now: () => number = Date.now) {
    db.prepare('DELETE FROM sessions WHERE expires_at <= ?').run(this.now());
    for (const row of db.prepare('SELECT token_hash, expires_at FROM sessions').all() as Array<{
      token_hash: string;
      expires_at: number;
    }>) {
      this.live.set(row.token_hash, row.expires_at);
    }
  }

  /** Creates a session and returns the cookie value. */
  create(): { token: string; expiresAt: number } {
    const token = randomBytes(32).toString('base64url');
    const expiresAt = this.now() + SESSION_TTL_MS;
    const hash = hashToken(token);
    this.db
      .prepare('INSERT INTO sessions (token_hash, created_at, expires_at) VALUES (?, ?, ?)')
      .run(hash, new Date(this.now()).toISOString(), expiresAt);
    this.live.set(hash, expiresAt);
    return { token, expiresAt };
  }

  /** True when the cookie value names a live session. Lookup is by hash, so no secret is compared. */
  isValid(token: string): boolean {
    if (token.length > 100) return false;
    const hash = hashToken(token);
    const expiresAt = this.live.get(hash);
    if (expiresAt === undefined) return false;
    if (expiresAt <= this.now()) {
      this.revokeHash(hash);
      return false;
    }
    return true;
  }

  revoke(token: string): void {
    this.revokeHash(hashToken(token));
  }

  /** Ends every session (e.g. after a password change). */
  revokeAll(): void {
    this.db.prepare('DELETE FROM sessions').run();
    this.live.clear();
  }

  private revokeHash(hash: string): void {
    this.live.delete(hash);
    this.db.prepare('DELETE FROM sessions WHERE token_hash = ?').run(hash);
  }
}
