/** A stored dashboard session: the sha256 of its cookie value and when it expires (unix ms). */
export interface StoredSession {
  hash: string;
  expiresAt: number;
}

/**
 * The dashboard sessions' storage port. `SessionStore` keeps the live sessions in memory (checked per
 * dashboard request); the port is touched by logins, logouts and loads (boot, and `reload()` when another
 * cluster node wrote). Implemented by `SqlSessionRepository` (test/foundation/auth-port.test.ts).
 */
export interface SessionRepository {
  /** Deletes the sessions expired at `now` and returns the others. */
  loadLive(now: number): Promise<StoredSession[]>;
  insert(session: StoredSession, createdAt: string): Promise<void>;
  remove(hash: string): Promise<void>;
  removeAll(): Promise<void>;
}

/** The dashboard password's storage port (one scrypt hash per installation, or none). */
export interface PasswordRepository {
  get(): Promise<string | undefined>;
  set(hash: string, updatedAt: string): Promise<void>;
}
