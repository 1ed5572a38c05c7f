/**
 * Numbered migrations: applied in order inside transactions, recorded with checksums, and refused when the
 * files and the database disagree. Uses temp migration folders, plus the real `migrations/` folder.
 */
import { mkdtempSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { closeDatabase, openDatabase, type Db } from '../../src/daemon/store/db.js';
import { MIGRATIONS_DIR, MigrationError, migrate } from '../../src/daemon/store/migrate.js';

const cleanup: Array<() => void> = [];
afterEach(() => {
  while (cleanup.length) cleanup.pop()!();
});

function tempDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  cleanup.push(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** A migrations folder holding the given files. */
function migrationsDir(files: Record<string, string>): string {
  const dir = tempDir('router-mig-');
  for (const [name, sql] of Object.entries(files)) writeFileSync(join(dir, name), sql);
  return dir;
}

function freshDb(): Db {
  const db = openDatabase(join(tempDir('router-db-'), 'router.db'));
  cleanup.push(() => closeDatabase(db));
  return db;
}

const tables = (db: Db) =>
  (db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name").all() as Array<{ name: string }>).map(
    (r) => r.name,
  );
const recorded = (db: Db) =>
  (db.prepare('SELECT version, name FROM schema_migrations ORDER BY version').all() as Array<{ version: number; name: string }>);

const M1 = 'CREATE TABLE a (id INTEGER PRIMARY KEY);';
const M2 = 'CREATE TABLE b (id INTEGER PRIMARY KEY, a_id INTEGER REFERENCES a(id));';
const M3 = 'ALTER TABLE a ADD COLUMN label TEXT;';

describe('migrate()', () => {
  it('applies every migration to a fresh database, in order, and records each', () => {
    const dir = migrationsDir({ '0001_a.sql': M1, '0002_b.sql': M2, '0003_label.sql': M3, 'README.md': 'not a migration' });
    const db = freshDb();
    expect(migrate(db, dir)).toEqual({ applied: [1, 2, 3] });
    expect(tables(db)).toEqual(['a', 'b', 'schema_migrations']);
    expect(recorded(db)).toEqual([
      { version: 1, name: '0001_a.sql' },
      { version: 2, name: '0002_b.sql' },
      { version: 3, name: '0003_label.sql' },
    ]);
    const row = db.prepare('SELECT checksum, applied_at FROM schema_migrations WHERE version = 1').get() as { checksum: string; applied_at: string };
    expect(row.checksum).toMatch(/^[0-9a-f]{64}$/);
    expect(Number.isNaN(Date.parse(row.applied_at))).toBe(false);
  });

  it('a second run is a no-op; a new migration added later is applied alone', () => {
    const dir = migrationsDir({ '0001_a.sql': M1, '0002_b.sql': M2 });
    const db = freshDb();
    migrate(db, dir);
    db.prepare('INSERT INTO a (id) VALUES (7)').run();
    expect(migrate(db, dir)).toEqual({ applied: [] });
    expect(db.prepare('SELECT count(*) AS n FROM a').get()).toEqual({ n: 1 });
    writeFileSync(join(dir, '0003_label.sql'), M3);
    expect(migrate(db, dir)).toEqual({ applied: [3] });
    expect(db.prepare('SELECT id, label FROM a').get()).toEqual({ id: 7, label: null });
  });

  it('refuses a released migration that was edited', () => {
    const dir = migrationsDir({ '0001_a.sql': M1, '0002_b.sql': M2 });
    const db = freshDb();
    migrate(db, dir);
    writeFileSync(join(dir, '0001_a.sql'), `${M1}\n-- a harmless-looking comment`);
    expect(() => migrate(db, dir)).toThrow(MigrationError);
    expect(() => migrate(db, dir)).toThrow(/0001_a\.sql.*edited/);
  });

  it('refuses a gap in the numbering', () => {
    const dir = migrationsDir({ '0001_a.sql': M1, '0003_label.sql': M3 });
    const db = freshDb();
    expect(() => migrate(db, dir)).toThrow(/0002 is missing before 0003_label\.sql/);
    expect(tables(db)).toEqual(['schema_migrations']); // nothing applied
  });

  it('refuses a number used twice', () => {
    const dir = migrationsDir({ '0001_a.sql': M1, '0002_b.sql': M2, '0002_c.sql': M3 });
    expect(() => migrate(freshDb(), dir)).toThrow(/0002.*used twice/);
  });

  it('refuses a file name that is not NNNN_name.sql', () => {
    const dir = migrationsDir({ '0001_a.sql': M1, '2-b.sql': M2 });
    expect(() => migrate(freshDb(), dir)).toThrow(/does not match NNNN_name\.sql/);
  });

  it('refuses a released migration that was renamed', () => {
    const dir = migrationsDir({ '0001_a.sql': M1, '0002_b.sql': M2 });
    const db = freshDb();
    migrate(db, dir);
    renameSync(join(dir, '0002_b.sql'), join(dir, '0002_bee.sql'));
    expect(() => migrate(db, dir)).toThrow(/0002_b\.sql was renamed or renumbered to 0002_bee\.sql/);
  });

  it('refuses a released migration that was renumbered (a newer one slipped in before it)', () => {
    const dir = migrationsDir({ '0001_a.sql': M1, '0002_b.sql': M2 });
    const db = freshDb();
    migrate(db, dir);
    renameSync(join(dir, '0002_b.sql'), join(dir, '0003_b.sql'));
    writeFileSync(join(dir, '0002_label.sql'), M3);
    expect(() => migrate(db, dir)).toThrow(/renamed or renumbered/);
    expect(db.prepare("SELECT count(*) AS n FROM pragma_table_info('a') WHERE name = 'label'").get()).toEqual({ n: 0 });
  });

  it('refuses a database holding a migration this code does not know (opened by a newer router)', () => {
    const newer = migrationsDir({ '0001_a.sql': M1, '0002_b.sql': M2, '0003_label.sql': M3 });
    const older = migrationsDir({ '0001_a.sql': M1, '0002_b.sql': M2 });
    const db = freshDb();
    migrate(db, newer);
    expect(() => migrate(db, older)).toThrow(/0003_label\.sql.*does not ship/);
  });

  it('rolls back a failing migration: its partial DDL is not applied and it is not recorded', () => {
    const dir = migrationsDir({
      '0001_a.sql': M1,
      '0002_broken.sql': 'CREATE TABLE half_done (id INTEGER);\nCREATE INDEX half_idx ON half_done(id);\nCREATE TABLE oops (;',
    });
    const db = freshDb();
    expect(() => migrate(db, dir)).toThrow();
    expect(tables(db)).toEqual(['a', 'schema_migrations']);
    expect(db.prepare("SELECT count(*) AS n FROM sqlite_master WHERE name = 'half_idx'").get()).toEqual({ n: 0 });
    expect(recorded(db)).toEqual([{ version: 1, name: '0001_a.sql' }]);
    // Fixed (it was never released), it applies on the next run.
    writeFileSync(join(dir, '0002_broken.sql'), 'CREATE TABLE half_done (id INTEGER);');
    expect(migrate(db, dir)).toEqual({ applied: [2] });
  });
});

describe('the shipped migrations and database settings', () => {
  it('apply to a fresh file; WAL, foreign keys, sqlite-vec and FTS5 are available', () => {
    const file = join(tempDir('router-real-'), 'router.db');
    const db = openDatabase(file);
    cleanup.push(() => closeDatabase(db));
    const shipped = readdirSync(MIGRATIONS_DIR).filter((f) => f.endsWith('.sql')).length;
    expect(shipped).toBeGreaterThan(0);
    const { applied } = migrate(db);
    expect(applied).toEqual(Array.from({ length: shipped }, (_, i) => i + 1));
    expect(migrate(db)).toEqual({ applied: [] });
    expect(tables(db)).toEqual(expect.arrayContaining(['api_keys', 'settings', 'sessions', 'auth_password', 'schema_migrations']));

    expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
    expect(db.pragma('foreign_keys', { simple: true })).toBe(1);
    expect(() => db.exec('CREATE TABLE fk_parent (id INTEGER PRIMARY KEY); CREATE TABLE fk_child (p INTEGER REFERENCES fk_parent(id));')).not.toThrow();
    expect(() => db.prepare('INSERT INTO fk_child (p) VALUES (42)').run()).toThrow(/FOREIGN KEY/);

    const vec = db.prepare('SELECT vec_version() AS v').get() as { v: string };
    expect(vec.v).toMatch(/^v?\d+\.\d+/);
    db.exec('CREATE VIRTUAL TABLE vt USING vec0(embedding float[2])');
    db.prepare('INSERT INTO vt (rowid, embedding) VALUES (?, ?)').run(1n, JSON.stringify([0.5, 0.5]));

    db.exec("CREATE VIRTUAL TABLE fts USING fts5(body); INSERT INTO fts (body) VALUES ('routing proxy for models');");
    expect(db.prepare("SELECT body FROM fts WHERE fts MATCH 'proxy'").all()).toEqual([{ body: 'routing proxy for models' }]);
  });
});
