import type { BackupReason, BackupRecord } from '../../shared/wire.js';
import type { StatePaths } from '../../shared/paths.js';
import type { Logger } from '../logger.js';
import type { SettingsStore } from '../settings/store.js';
import type { Db } from '../store/db.js';
import { MIGRATIONS_DIR, readMigrations } from '../store/migrate.js';
import { BackupStore } from './store.js';

const DAY_MS = 86_400_000;
const HOUR_MS = 3_600_000;
/** The first daily check waits a minute after start, so short-lived daemons (tests, restarts) skip it. */
const FIRST_CHECK_MS = 60_000;

/**
 * Backups of the live database: on demand, daily (a timer checks hourly whether the newest daily backup is
 * a day old), before migrations (at boot) and before an import; automatic ones pruned to the retention
 * setting after each new one.
 */
export class BackupService {
  readonly store: BackupStore;
  private timers: NodeJS.Timeout[] = [];
  /** Set while an import is being prepared or applied: a second one is refused. */
  importing = false;

  constructor(
    private readonly deps: {
      db: Db;
      paths: StatePaths;
      settings: SettingsStore;
      log: Logger;
      migrationsDir?: string;
      /** Writes what is batched in memory (usage rows, key use times), so a snapshot holds it. */
      flush?: () => Promise<unknown>;
    },
  ) {
    this.store = new BackupStore(deps.paths.backups);
  }

  get migrationsDir(): string {
    return this.deps.migrationsDir ?? MIGRATIONS_DIR;
  }

  list(): BackupRecord[] {
    return this.store.list();
  }

  /** A backup now (online, consistent); automatic reasons prune older automatic backups. */
  async create(reason: BackupReason): Promise<BackupRecord> {
    await this.flush();
    const rec = await this.store.create(this.deps.db, reason);
    this.deps.log.info('database backup created', { id: rec.id, reason, size: rec.size });
    if (reason !== 'manual') this.prune();
    return rec;
  }

  /** Writes batched rows first, so a snapshot taken next holds every request answered so far. */
  async flush(): Promise<void> {
    await this.deps.flush?.();
  }

  /** Removes automatic backups beyond the retention setting. */
  prune(): void {
    for (const id of this.store.prune(this.deps.settings.get().backupRetention)) this.deps.log.info('old backup removed', { id });
  }

  /** Starts the daily check. */
  start(): void {
    const check = () => void this.daily().catch((err) => this.deps.log.error('daily backup failed', { error: (err as Error).message }));
    const first = setTimeout(check, FIRST_CHECK_MS);
    const every = setInterval(check, HOUR_MS);
    first.unref();
    every.unref();
    this.timers.push(first, every);
  }

  /** Creates the daily backup when it is due; returns it, or undefined when not due or turned off. */
  async daily(now = Date.now()): Promise<BackupRecord | undefined> {
    if (!this.deps.settings.get().dailyBackups) return undefined;
    const last = this.store.list().find((b) => b.reason === 'daily');
    if (last && now - Date.parse(last.createdAt) < DAY_MS) return undefined;
    return this.create('daily');
  }

  stop(): void {
    for (const t of this.timers) clearTimeout(t);
    this.timers = [];
  }
}

/**
 * Before migrations run at boot on a database that already holds data: a copy as it was, so an upgrade
 * that goes wrong can be undone (`router backup import` of that file with the older router). Fresh
 * databases (no migration recorded) need none.
 */
export function backupBeforeMigrations(db: Db, paths: StatePaths, migrationsDir: string = MIGRATIONS_DIR): BackupRecord | undefined {
  const hasTable = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'").get() !== undefined;
  if (!hasTable) return undefined;
  const recorded = (db.prepare('SELECT COUNT(*) AS n FROM schema_migrations').get() as { n: number }).n;
  if (recorded === 0 || recorded >= readMigrations(migrationsDir).length) return undefined;
  return new BackupStore(paths.backups).createQuiescent(db, paths.db, 'pre-migration');
}
