import { performance } from 'node:perf_hooks';
import { maskConnectionUrl, maskUrlsIn } from '../../shared/mask-url.js';
import { MigrationError } from '../store/migrate.js';
import { migratePostgres } from '../store/pg-migrate.js';
import { PostgresChangeFeed } from '../store/pg-changes.js';
import { DatabaseUnavailableError, isUnavailable } from '../store/driver.js';
import type { PostgresDriver } from '../store/postgres-driver.js';
import { opensCheckValue, sealCheckValue, StartRefused, WRONG_KEY_MESSAGE } from './identity.js';

/**
 * The shared database of cluster mode (`--database-url`, CONTRACT "Wave three > Cluster mode"): PostgreSQL
 * 15+, migrated once under an advisory lock by whichever node gets there first, holding the records of every
 * module on the storage seam (cluster/shared-modules.ts). Its URL is shown only masked (`user:****@host`).
 */

/** `--database-url` > env ROUTER_DATABASE_URL; undefined: one machine (the SQLite file). */
export function databaseUrlOf(flag: string | undefined, env: NodeJS.ProcessEnv = process.env): string | undefined {
  const url = flag ?? env.ROUTER_DATABASE_URL;
  return url && url.trim() !== '' ? url.trim() : undefined;
}

/** Accepts `postgres://` and `postgresql://` URLs; anything else refuses the start with one line. */
export function checkDatabaseUrl(url: string): void {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new StartRefused('the database URL is not a URL (expected postgres://user:password@host:5432/database)');
  }
  if (parsed.protocol !== 'postgres:' && parsed.protocol !== 'postgresql:') {
    throw new StartRefused(`the database URL must start with postgres:// or postgresql:// (got ${parsed.protocol}//)`);
  }
}

/** The cluster_meta row holding the sealing-key check value. */
const SEALING_CHECK = 'sealingCheck';
const CHECK_CONTEXT = 'cluster:sealingCheck';

/** How often the database's health is measured (a `SELECT 1` on the pool). */
export const DATABASE_PROBE_MS = 2_000;

export interface DatabaseHealth {
  healthy: boolean;
  latencyMs: number | null;
  /** When the current state began (ISO). */
  since: string;
}

/**
 * A node's connection to the shared database: the driver every ported module's adapter uses, and its health
 * (probed every 2 s; a failed statement anywhere marks it down at once). Health changes are logged once and
 * told to listeners (the change feed reloads every module when the database comes back).
 */
export class SharedDatabase {
  readonly kind = 'postgres' as const;
  /** The URL with its password masked. */
  readonly url: string;
  private healthy = true;
  private latencyMs: number | null = null;
  private since = new Date().toISOString();
  private timer: NodeJS.Timeout | undefined;
  private readonly listeners: Array<(healthy: boolean) => void> = [];
  private closed = false;
  private feed: PostgresChangeFeed | undefined;

  constructor(
    readonly driver: PostgresDriver,
    rawUrl: string,
    private readonly log?: { info(m: string, f?: object): void; warn(m: string, f?: object): void },
  ) {
    this.url = maskConnectionUrl(rawUrl);
  }

  health(): DatabaseHealth {
    return { healthy: this.healthy, latencyMs: this.latencyMs, since: this.since };
  }

  /** Called with the new state when the database goes down or comes back. */
  onHealth(fn: (healthy: boolean) => void): void {
    this.listeners.push(fn);
  }

  /** Starts the periodic probe. */
  start(intervalMs = DATABASE_PROBE_MS): void {
    this.timer = setInterval(() => void this.probe(), intervalMs);
    this.timer.unref();
  }

  /** One `SELECT 1`: measures the round trip and updates the health. */
  async probe(): Promise<boolean> {
    const start = performance.now();
    try {
      await this.driver.query('SELECT 1');
      this.latencyMs = Math.round((performance.now() - start) * 1000) / 1000;
      this.setHealthy(true);
      return true;
    } catch (err) {
      this.latencyMs = null;
      this.setHealthy(false, err);
      return false;
    }
  }

  /** Marks the database down after a failure seen elsewhere (a write, the change feed's connection). */
  failed(err: unknown): void {
    if (isUnavailable(err)) this.setHealthy(false, err);
  }

  private setHealthy(healthy: boolean, err?: unknown): void {
    if (this.healthy === healthy || this.closed) return;
    this.healthy = healthy;
    this.since = new Date().toISOString();
    if (healthy) this.log?.info('database reachable again', { url: this.url });
    else this.log?.warn('database unreachable: requests are served from the last known configuration, management writes answer 503', { url: this.url, error: reason(err) });
    for (const fn of this.listeners) fn(healthy);
  }

  /**
   * Starts the change feed on this database (LISTEN/NOTIFY on a connection of its own): its connection
   * dropping marks the database down at once; its coming back triggers a probe (and the feed reloads every
   * module, store/pg-changes.ts).
   */
  async startChanges(nodeId: string): Promise<PostgresChangeFeed> {
    const feed = new PostgresChangeFeed({
      driver: this.driver,
      nodeId,
      onError: (what, err) => this.log?.warn(`change feed: ${what} failed`, { error: reason(err) }),
      onConnection: (up, err) => {
        if (up) void this.probe();
        else this.setHealthy(false, err ?? new DatabaseUnavailableError());
      },
    });
    this.feed = feed;
    await feed.start();
    return feed;
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.timer) clearInterval(this.timer);
    await this.feed?.close();
    await this.driver.close().catch(() => undefined);
  }
}

/** A failure's words without the URL's password (node-postgres may quote what it tried to reach). */
function reason(err: unknown): string {
  const cause = (err as { cause?: unknown } | undefined)?.cause ?? err;
  const code = (cause as { code?: unknown } | undefined)?.code;
  const text = cause instanceof Error ? cause.message : String(cause);
  return maskUrlsIn(typeof code === 'string' && !text.includes(code) ? `${code}: ${text}` : text).slice(0, 300);
}

/**
 * Opens the shared database: connects (a failure refuses the start, naming the masked URL and why),
 * applies pending migrations under the lock (a schema from another build refuses the start, naming both
 * versions), then checks that `sealingKey` is the cluster's.
 */
export async function openSharedDatabase(opts: {
  url: string;
  nodeId: string;
  sealingKey: Buffer;
  log?: ConstructorParameters<typeof SharedDatabase>[2];
}): Promise<SharedDatabase> {
  checkDatabaseUrl(opts.url);
  // node-postgres loads only for a cluster node: one machine never holds it (docs/performance.md).
  const { PostgresDriver } = await import('../store/postgres-driver.js');
  const driver = new PostgresDriver({ url: opts.url, applicationName: `router ${opts.nodeId}`.slice(0, 63) });
  const db = new SharedDatabase(driver, opts.url, opts.log);
  try {
    try {
      await driver.query('SELECT 1');
    } catch (err) {
      throw new StartRefused(`cannot reach the database ${db.url}: ${reason(err)}`);
    }
    try {
      const { applied } = await migratePostgres(driver);
      if (applied.length > 0) opts.log?.info('database migrated', { url: db.url, applied });
    } catch (err) {
      if (err instanceof MigrationError) throw new StartRefused(maskUrlsIn(err.message));
      throw new StartRefused(`cannot migrate the database ${db.url}: ${reason(err)}`);
    }
    await checkSharedSealingKey(driver, opts.sealingKey);
  } catch (err) {
    await driver.close().catch(() => undefined);
    throw err;
  }
  return db;
}

/**
 * Makes sure every node seals with the same key: the first node stores a known value sealed with its key
 * (insert-if-absent, then read back, so two first nodes with different keys cannot both win); a node whose
 * key does not open the stored value refuses to start.
 */
export async function checkSharedSealingKey(driver: PostgresDriver, key: Buffer): Promise<void> {
  await driver.run('INSERT INTO cluster_meta (key, value, updated_at) VALUES (?, ?, ?) ON CONFLICT (key) DO NOTHING', [
    SEALING_CHECK,
    sealCheckValue(key, CHECK_CONTEXT),
    new Date().toISOString(),
  ]);
  const [row] = await driver.query<{ value: string }>('SELECT value FROM cluster_meta WHERE key = ?', [SEALING_CHECK]);
  if (!row || !opensCheckValue(row.value, key, CHECK_CONTEXT)) throw new StartRefused(WRONG_KEY_MESSAGE);
}
