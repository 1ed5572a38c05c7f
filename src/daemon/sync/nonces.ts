import type { SqlDriver } from '../store/driver.js';

/**
 * The sync nonces' storage port: seen nonces of signed sync requests (`sync_nonces`). They live in the
 * database, so a restart does not reopen the window, and in cluster mode in the shared database, so a nonce
 * answered by one node is refused by every other (replay protection holds behind a load balancer). Not
 * configuration: there is no snapshot and no change topic; each admitted sync request takes its nonce with
 * one atomic statement. Implemented over SQLite and PostgreSQL by `SqlSyncNonceRepository`
 * (test/sync/nonces-port.test.ts).
 */
export interface SyncNonceRepository {
  /**
   * Records `nonce` as used until `expiresAt` (epoch ms) and drops nonces expired by `now`; false when it
   * was already used (a replay). Two copies of a request racing each other, on one node or two, cannot
   * both get true.
   */
  take(nonce: string, expiresAt: number, now: number): Promise<boolean>;
}

/**
 * The sync nonces port over the driver seam: one SQL text for SQLite and PostgreSQL. A nonce is kept until
 * a request carrying it would fail the clock check anyway; taking one is a single INSERT that the primary
 * key refuses for a nonce already stored (`ON CONFLICT DO NOTHING`: the database decides, atomically).
 */
export class SqlSyncNonceRepository implements SyncNonceRepository {
  constructor(private readonly driver: SqlDriver) {}

  async take(nonce: string, expiresAt: number, now: number): Promise<boolean> {
    await this.driver.run('DELETE FROM sync_nonces WHERE expires_at < ?', [now]);
    const { changes } = await this.driver.run('INSERT INTO sync_nonces (nonce, expires_at) VALUES (?, ?) ON CONFLICT (nonce) DO NOTHING', [nonce, expiresAt]);
    return changes === 1;
  }
}
