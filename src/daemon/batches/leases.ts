import type { SqlDriver } from '../store/driver.js';
import type { BatchLeases } from './port.js';
import { UNFINISHED_STATUSES } from './store.js';

/**
 * Which node runs an unfinished batch (the BatchLeases port, batches/port.ts; docs/batch.md "Cluster mode").
 */

/** A lease lasts this long without renewal: a killed node's batches move to another node within it (plus the grace). */
export const DEFAULT_LEASE_MS = 30_000;
/**
 * A lapsed lease is taken only this long after its end: the holder stops sending lines when its own lease
 * ends (by its own clock), so clocks this far apart still never have two nodes sending one batch.
 */
export const DEFAULT_LEASE_GRACE_MS = 5_000;

/**
 * The lease length of this process: 30 s, or ROUTER_TEST_BATCH_LEASE_MS (tests only, read once at start;
 * docs/batch.md "Testing") so a takeover test need not wait half a minute.
 */
export function leaseMsFromEnv(env: NodeJS.ProcessEnv = process.env): number {
  const v = Number(env.ROUTER_TEST_BATCH_LEASE_MS);
  return Number.isInteger(v) && v >= 300 ? v : DEFAULT_LEASE_MS;
}

/** One machine: this process runs every batch; a restart resumes them all, as it always did. */
export class LocalLeases implements BatchLeases {
  readonly shared = false;
  readonly ttlMs = Number.POSITIVE_INFINITY;

  async claim(_batchId: string): Promise<boolean> {
    return true;
  }

  async renew(ids: readonly string[]): Promise<Set<string>> {
    return new Set(ids);
  }

  async release(_ids: readonly string[]): Promise<void> {}

  async lapsed(): Promise<string[]> {
    return [];
  }
}

/**
 * Leases in the shared database (table batch_leases, migrations/pg/0030): one row per running batch with
 * the node holding it and until when (ISO-8601 text: string order is time order). A claim is one upsert
 * whose condition (free, lapsed, or ours) is checked under the row's lock, so of two nodes claiming the
 * same lapsed batch exactly one gets it.
 */
export class SqlBatchLeases implements BatchLeases {
  readonly shared = true;

  constructor(
    private readonly driver: SqlDriver,
    private readonly nodeId: string,
    readonly ttlMs = DEFAULT_LEASE_MS,
    private readonly graceMs = Math.min(DEFAULT_LEASE_GRACE_MS, Math.floor(ttlMs / 3)),
    private readonly now: () => number = Date.now,
  ) {}

  private until(): string {
    return new Date(this.now() + this.ttlMs).toISOString();
  }

  /** Leases that ended before this are free to take. */
  private lapsedBefore(): string {
    return new Date(this.now() - this.graceMs).toISOString();
  }

  async claim(batchId: string): Promise<boolean> {
    const { changes } = await this.driver.run(
      `INSERT INTO batch_leases (batch_id, node_id, until) VALUES (?, ?, ?)
       ON CONFLICT (batch_id) DO UPDATE SET node_id = excluded.node_id, until = excluded.until
       WHERE batch_leases.node_id = excluded.node_id OR batch_leases.until < ?`,
      [batchId, this.nodeId, this.until(), this.lapsedBefore()],
    );
    return changes > 0;
  }

  async renew(ids: readonly string[]): Promise<Set<string>> {
    if (ids.length === 0) return new Set();
    const rows = await this.driver.query<{ batch_id: string }>(
      `UPDATE batch_leases SET until = ? WHERE node_id = ? AND batch_id IN (${ids.map(() => '?').join(', ')}) RETURNING batch_id`,
      [this.until(), this.nodeId, ...ids],
    );
    return new Set(rows.map((r) => r.batch_id));
  }

  async release(ids: readonly string[]): Promise<void> {
    if (ids.length === 0) return;
    await this.driver.run(`DELETE FROM batch_leases WHERE node_id = ? AND batch_id IN (${ids.map(() => '?').join(', ')})`, [this.nodeId, ...ids]);
  }

  async lapsed(): Promise<string[]> {
    const rows = await this.driver.query<{ id: string }>(
      `SELECT b.id FROM batches b LEFT JOIN batch_leases l ON l.batch_id = b.id
       WHERE b.status IN (${UNFINISHED_STATUSES.map(() => '?').join(', ')}) AND (l.batch_id IS NULL OR l.until < ?)
       ORDER BY b.rowid`,
      [...UNFINISHED_STATUSES, this.lapsedBefore()],
    );
    return rows.map((r) => r.id);
  }
}
