/**
 * `router cluster migrate --from-home DIR --database-url URL [--secret-key-file F]` (issue 29 item 6,
 * CONTRACT "Wave three > Cluster mode"): moves a single machine's state into the empty PostgreSQL database
 * of a new cluster. The state folder is never changed: its database is copied to a temp file first, brought
 * to this build's schema, its secrets re-sealed there with the cluster's key (backups/rekey.ts, which knows
 * every sealed column), and then copied table by table (cluster/copy-tables.ts).
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { maskConnectionUrl } from '../../shared/mask-url.js';
import { statePaths } from '../../shared/paths.js';
import { isAlive, readPidFile } from '../../shared/pidfile.js';
import { rekeySecrets, type RekeyCounts } from '../backups/rekey.js';
import { copyFileContents, DiskFileContents, SqlFileContents, type CopiedContents } from '../batches/contents.js';
import { SqlBatchRepository } from '../batches/sql-repository.js';
import { closeDatabase, openDatabase } from '../store/db.js';
import { migrate } from '../store/migrate.js';
import { migratePostgres, PG_MIGRATIONS_DIR } from '../store/pg-migrate.js';
import { PostgresDriver } from '../store/postgres-driver.js';
import { SqliteDriver } from '../store/sqlite-driver.js';
import { SqlSettingsRepository } from '../settings/sql-repository.js';
import { copyTables, nonEmptyTables, type CopiedTable, type SkippedTable } from './copy-tables.js';
import { copyFileVectors } from '../memory/vector-storage.js';
import { copySkillFolders } from '../skills/disk-repository.js';
import { SqlSkillRepository } from '../skills/sql-repository.js';
import { checkSharedSealingKey } from './database.js';
import { checkSealingKey, sealedConnectionSample, StartRefused } from './identity.js';
import { SqlProviderRepository } from '../providers/sql-repository.js';

/** A refusal with a one-line message for the user (bad folder, non-empty database, wrong key...). */
export class MigrateRefused extends Error {
  override name = 'MigrateRefused';
}

export interface ClusterMigrateOptions {
  /** The single machine's state folder. */
  home: string;
  /** The cluster's PostgreSQL database (postgres://...). */
  databaseUrl: string;
  /** The cluster's sealing key (ROUTER_SECRET_KEY / --secret-key-file); default: the folder's own secret.key. */
  secretKey?: Buffer;
  /** PostgreSQL migrations to apply (tests); default the shipped ones. */
  pgMigrationsDir?: string;
}

export interface ClusterMigrateReport {
  /** The database URL, password masked. */
  database: string;
  /** Where the cluster key came from. */
  key: 'given' | 'state-folder';
  /** PostgreSQL schema version after the migration. */
  schemaVersion: number;
  copied: CopiedTable[];
  skipped: SkippedTable[];
  /** Sealed values: readable with the cluster key already, re-sealed with it, or unreadable (owner needs re-entry). */
  secrets: RekeyCounts;
  /** Batch API file contents moved from the folder's `files/` into the database (a cluster keeps them there). */
  fileContents: CopiedContents;
}

function readKey(file: string): Buffer | undefined {
  if (!existsSync(file)) return undefined;
  const key = readFileSync(file);
  if (key.length !== 32) throw new MigrateRefused(`the state folder's secret.key has ${key.length} bytes, expected 32`);
  return key;
}

export async function clusterMigrate(opts: ClusterMigrateOptions): Promise<ClusterMigrateReport> {
  const paths = statePaths(opts.home);
  if (!existsSync(paths.db)) throw new MigrateRefused(`no router database in ${opts.home} (expected router.db): give the state folder of a single-machine router`);
  const pid = readPidFile(paths.pid);
  if (pid && isAlive(pid.pid)) {
    throw new MigrateRefused(`the router of ${opts.home} is running (pid ${pid.pid}): stop it first (router stop), so nothing it writes after the copy is lost`);
  }
  const homeKey = readKey(paths.secretKey);
  const clusterKey = opts.secretKey ?? homeKey;
  if (!clusterKey) throw new MigrateRefused('the state folder has no secret.key: give the cluster key with --secret-key-file or ROUTER_SECRET_KEY');

  const work = mkdtempSync(join(tmpdir(), 'router-cluster-migrate-'));
  const pg = new PostgresDriver({ url: opts.databaseUrl, max: 2, applicationName: 'router cluster migrate' });
  try {
    // A consistent copy of the folder's database, brought to this build's schema: the folder stays as it was.
    const source = openDatabase(paths.db);
    const copyFile = join(work, 'router.db');
    try {
      source.prepare('VACUUM INTO ?').run(copyFile);
    } finally {
      closeDatabase(source);
    }
    const db = openDatabase(copyFile);
    try {
      migrate(db);
      const secrets = rekeySecrets(db, clusterKey, homeKey);
      try {
        // The check value every node opens at start; sealed here with the cluster key when the folder had none.
        const file = new SqliteDriver(db);
        await checkSealingKey(new SqlSettingsRepository(file), () => sealedConnectionSample(new SqlProviderRepository(file)), clusterKey);
      } catch (err) {
        if (err instanceof StartRefused) throw new MigrateRefused(err.message);
        throw err;
      }
      const busy = await nonEmptyTables(pg);
      if (busy.length > 0) {
        const list = busy.map((b) => `${b.table} (${b.rows} rows)`).join(', ');
        throw new MigrateRefused(`the database is not empty: ${list}. cluster migrate copies into an empty database only (create a new one, or drop these tables)`);
      }
      const { version } = await migratePostgres(pg, opts.pgMigrationsDir ?? PG_MIGRATIONS_DIR);
      const report = await copyTables(db, pg);
      const fileContents = await copyFileContents(new SqlBatchRepository(new SqliteDriver(db)), new DiskFileContents(join(opts.home, 'files')), new SqlFileContents(pg));
      // Memory vectors live in a sqlite-vec table on one machine and as rows in a cluster.
      const vectors = await copyFileVectors(db, pg);
      if (vectors > 0) report.copied.push({ table: 'memory_vectors', rows: vectors });
      // Skills are folders on one machine (the state folder's skills/) and rows in a cluster.
      const skills = await copySkillFolders(join(opts.home, 'skills'), new SqlSkillRepository(pg));
      if (skills > 0) report.copied.push({ table: 'skills', rows: skills });
      // The cluster's check value (cluster_meta), sealed with the cluster key: a node started with another
      // key is refused instead of sealing secrets the copied ones cannot share a key with.
      await checkSharedSealingKey(pg, clusterKey);
      return { database: maskConnectionUrl(opts.databaseUrl), key: opts.secretKey ? 'given' : 'state-folder', schemaVersion: version, ...report, secrets, fileContents };
    } finally {
      closeDatabase(db);
    }
  } finally {
    await pg.close().catch(() => undefined);
    rmSync(work, { recursive: true, force: true });
  }
}
