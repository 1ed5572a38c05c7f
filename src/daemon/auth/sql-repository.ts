import type { SqlDriver } from '../store/driver.js';
import type { PasswordRepository, SessionRepository, StoredSession } from './port.js';

/** The sessions port over the driver seam (table sessions: token_hash, created_at, expires_at in unix ms). */
export class SqlSessionRepository implements SessionRepository {
  constructor(private readonly driver: SqlDriver) {}

  async loadLive(now: number): Promise<StoredSession[]> {
    await this.driver.run('DELETE FROM sessions WHERE expires_at <= ?', [now]);
    const rows = await this.driver.query<{ token_hash: string; expires_at: number }>('SELECT token_hash, expires_at FROM sessions');
    return rows.map((r) => ({ hash: r.token_hash, expiresAt: Number(r.expires_at) }));
  }

  async insert(s: StoredSession, createdAt: string): Promise<void> {
    await this.driver.run('INSERT INTO sessions (token_hash, created_at, expires_at) VALUES (?, ?, ?)', [s.hash, createdAt, s.expiresAt]);
  }

  async remove(hash: string): Promise<void> {
    await this.driver.run('DELETE FROM sessions WHERE token_hash = ?', [hash]);
  }

  async removeAll(): Promise<void> {
    await this.driver.run('DELETE FROM sessions');
  }
}

/** The dashboard password port over the driver seam (table auth_password, one row). */
export class SqlPasswordRepository implements PasswordRepository {
  constructor(private readonly driver: SqlDriver) {}

  async get(): Promise<string | undefined> {
    const [row] = await this.driver.query<{ hash: string }>('SELECT hash FROM auth_password WHERE id = 1');
    return row?.hash;
  }

  async set(hash: string, updatedAt: string): Promise<void> {
    await this.driver.run(
      'INSERT INTO auth_password (id, hash, updated_at) VALUES (1, ?, ?) ON CONFLICT (id) DO UPDATE SET hash = excluded.hash, updated_at = excluded.updated_at',
      [hash, updatedAt],
    );
  }
}
