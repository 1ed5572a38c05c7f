import { createHash, randomBytes } from 'node:crypto';
import type { Logger } from '../logger.js';
import { LOCAL_CHANGES, type ChangeFeed } from '../store/changes.js';
import type { SessionRepository } from './port.js';

export const SESSION_TTL_MS = 7 * 24 * 3600 * 1000;

function hashToken(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

/** The change-feed topic of the dashboard sessions and password (docs/storage.md). */
export const SESSIONS_TOPIC = 'sessions';

/**
 * Dashboard sessions behind the `auth_token` cookie. Only the sha256 of a cookie value is stored, so a
 * copy of the database does not hand out live sessions. Kept in memory (checked per request), loaded from
 * and written through the `SessionRepository` port (SQLite or PostgreSQL). A login or logout publishes
 * 'sessions'; a notice from another cluster node reloads, so a session opened on one node opens them all.
 */
export class SessionStore {
  private live = new Map<string, number>();

  private constructor(
    private readonly repo: SessionRepository,
    private readonly changes: ChangeFeed,
    private readonly now: () => number,
    private readonly log?: Logger,
  ) {}

  /** Loads the live sessions (dropping expired ones); subscribes to other nodes' changes. */
  static async create(repo: SessionRepository, changes: ChangeFeed = LOCAL_CHANGES, log?: Logger, now: () => number = Date.now): Promise<SessionStore> {
    const store = new SessionStore(repo, changes, now, log);
    await store.reload();
    // The feed logs a failed reload (and calls again after reconnecting).
    changes.subscribe(SESSIONS_TOPIC, () => store.reload());
    return store;
  }

  /** Replaces the live sessions with what storage holds now. */
  async reload(): Promise<void> {
    const rows = await this.repo.loadLive(this.now());
    this.live = new Map(rows.map((r) => [r.hash, r.expiresAt]));
  }

  /** Creates a session and returns the cookie value. */
  async create(): Promise<{ token: string; expiresAt: number }> {
    const token = randomBytes(32).toString('base64url');
    const expiresAt = this.now() + SESSION_TTL_MS;
    const hash = hashToken(token);
    await this.repo.insert({ hash, expiresAt }, new Date(this.now()).toISOString());
    this.live.set(hash, expiresAt);
    this.changes.publish(SESSIONS_TOPIC);
    return { token, expiresAt };
  }

  /** True when the cookie value names a live session. Lookup is by hash, so no secret is compared. */
  isValid(token: string): boolean {
    if (token.length > 100) return false;
    const hash = hashToken(token);
    const expiresAt = this.live.get(hash);
    if (expiresAt === undefined) return false;
    if (expiresAt <= this.now()) {
      // Expired: gone from memory now; the row is deleted behind the request (or at the next load).
      this.live.delete(hash);
      this.repo.remove(hash).catch((err: unknown) => this.log?.warn('expired session delete failed', { error: err instanceof Error ? err.message : String(err) }));
      return false;
    }
    return true;
  }

  async revoke(token: string): Promise<void> {
    const hash = hashToken(token);
    await this.repo.remove(hash);
    this.live.delete(hash);
    this.changes.publish(SESSIONS_TOPIC);
  }

  /** Ends every session (e.g. after a password change). */
  async revokeAll(): Promise<void> {
    await this.repo.removeAll();
    this.live.clear();
    this.changes.publish(SESSIONS_TOPIC);
  }
}
