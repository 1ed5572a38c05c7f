import { cpSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migratePostgres, PG_MIGRATIONS_DIR } from '../../src/daemon/store/pg-migrate.js';
import { PostgresDriver } from '../../src/daemon/store/postgres-driver.js';
import { postgresUnavailable, startPostgres, type PostgresServer } from '../support/postgres.js';

const missing = postgresUnavailable();
let server: PostgresServer;
const drivers: PostgresDriver[] = [];
const dirs: string[] = [];

beforeAll(async () => {
  if (!missing) server = await startPostgres();
}, 60_000);
afterAll(async () => {
  for (const d of drivers) await d.close();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
  await server?.stop();
});

const connect = (url: string) => {
  const d = new PostgresDriver({ url, max: 2 });
  drivers.push(d);
  return d;
};

/** A copy of the shipped PostgreSQL migrations plus `extra` files (another build's migrations). */
function migrationsWith(extra: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'router-pgmig-'));
  dirs.push(dir);
  cpSync(PG_MIGRATIONS_DIR, dir, { recursive: true });
  for (const [name, sql] of Object.entries(extra)) writeFileSync(join(dir, name), sql);
  return dir;
}

/** The shipped migrations' numbers (ranges are reserved per module, so they may have gaps). */
const versions = readdirSync(PG_MIGRATIONS_DIR)
  .filter((f) => f.endsWith('.sql'))
  .map((f) => Number(f.slice(0, 4)))
  .sort((a, b) => a - b);
const shipped = versions.length;
const next = String((versions.at(-1) ?? 0) + 1).padStart(4, '0');

describe.skipIf(missing)(`PostgreSQL migrations${missing ? ` (skipped: ${missing})` : ''}`, () => {
  it('three nodes starting together apply each migration exactly once, under the advisory lock', async () => {
    const url = await server.createDatabase();
    const results = await Promise.all([connect(url), connect(url), connect(url)].map((d) => migratePostgres(d)));
    const applied = results.flatMap((r) => r.applied);
    expect(applied.sort((a, b) => a - b)).toEqual(versions);
    const rows = await connect(url).query<{ version: number }>('SELECT version FROM schema_migrations ORDER BY version');
    expect(rows.map((r) => r.version)).toEqual(versions);
    expect((await migratePostgres(connect(url))).applied).toEqual([]);
  });

  it('a node built for an older schema refuses a database a newer node migrated, naming both versions', async () => {
    const url = await server.createDatabase();
    await migratePostgres(connect(url), migrationsWith({ [`${next}_newer.sql`]: 'CREATE TABLE newer_thing (id TEXT PRIMARY KEY);' }));
    const pad = (n: number) => String(n).padStart(4, '0');
    await expect(migratePostgres(connect(url))).rejects.toThrow(
      `the database schema is at version ${next} but this router is built for version ${pad(versions.at(-1) ?? 0)} (migration ${next}_newer.sql is unknown here)`,
    );
  });

  it('a node whose build ships a different migration under a recorded number refuses to serve', async () => {
    const url = await server.createDatabase();
    await migratePostgres(connect(url), migrationsWith({ [`${next}_mine.sql`]: 'CREATE TABLE mine (id TEXT);' }));
    await expect(migratePostgres(connect(url), migrationsWith({ [`${next}_theirs.sql`]: 'CREATE TABLE theirs (id TEXT);' }))).rejects.toThrow(
      `the database's migration ${next}_mine.sql differs from this router's ${next}_theirs.sql`,
    );
  });

  it('numbers may have gaps: a file below the highest recorded one is applied when it is not recorded yet', async () => {
    const url = await server.createDatabase();
    const later = String((versions.at(-1) ?? 0) + 5).padStart(4, '0');
    const dir = migrationsWith({ [`${later}_later.sql`]: 'CREATE TABLE later_thing (id TEXT);' });
    expect((await migratePostgres(connect(url), dir)).applied).toEqual([...versions, Number(later)]);
    // Another module's reserved number lands afterwards, below the highest: pending, applied once.
    writeFileSync(join(dir, `${next}_between.sql`), 'CREATE TABLE between_thing (id TEXT);');
    expect((await migratePostgres(connect(url), dir)).applied).toEqual([Number(next)]);
    expect((await migratePostgres(connect(url), dir)).applied).toEqual([]);
    expect(await connect(url).query("SELECT to_regclass('between_thing') AS t")).toEqual([{ t: 'between_thing' }]);
  });

  it('a failing migration leaves nothing half-applied and says which file failed', async () => {
    const url = await server.createDatabase();
    const dir = migrationsWith({ [`${next}_broken.sql`]: 'CREATE TABLE half (id TEXT); SELECT * FROM no_such_table;' });
    await expect(migratePostgres(connect(url), dir)).rejects.toThrow(`PostgreSQL migration ${next}_broken.sql failed`);
    const d = connect(url);
    expect(await d.query("SELECT to_regclass('half') AS t")).toEqual([{ t: null }]);
    expect((await d.query('SELECT version FROM schema_migrations')).length).toBe(shipped);
  });
});
