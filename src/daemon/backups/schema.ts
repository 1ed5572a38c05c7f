import Database from 'better-sqlite3';
import * as sqliteVec from 'sqlite-vec';
import { badRequest } from '../http/errors.js';
import { VEC_TABLE } from '../memory/store.js';
import type { Db } from '../store/db.js';
import { readMigrations } from '../store/migrate.js';

/** One schema object as sqlite_master lists it. */
interface SchemaObject {
  type: string;
  name: string;
  tbl_name: string;
  sql: string | null;
}

/** Objects a router database may hold beyond its migrations: SQLite's own statistics, the export marker. */
const EXTRA_TABLES = new Set(['sqlite_stat1', 'sqlite_stat4', 'sqlite_sequence', 'router_export']);
/** The vector table the memory engine creates at run time (its width follows the embedding model). */
const VEC_SQL = new RegExp(`^CREATE VIRTUAL TABLE ${VEC_TABLE} USING vec0\\(scope text partition key, embedding float\\[\\d{1,5}\\] distance_metric=cosine\\)$`);

const normalize = (sql: string | null) => (sql ?? '').replace(/\s+/g, ' ').trim();
const shown = (name: string) => JSON.stringify(name.slice(0, 100));

function objects(db: Db): Map<string, SchemaObject> {
  const rows = db.prepare('SELECT type, name, tbl_name, sql FROM sqlite_master').all() as SchemaObject[];
  return new Map(rows.map((r) => [r.name, r]));
}

function columns(db: Db, table: string): string {
  return JSON.stringify(db.prepare('SELECT name, type, "notnull", dflt_value, pk, hidden FROM pragma_table_xinfo(?)').all(table));
}

/** The schema router's own migrations build up to `level` (sqlite-vec loaded, as for a real database). */
function referenceSchema(dir: string, level: number): Db {
  const ref = new Database(':memory:');
  sqliteVec.load(ref);
  ref.exec('CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, checksum TEXT NOT NULL, applied_at TEXT NOT NULL)');
  for (const m of readMigrations(dir).slice(0, level)) ref.exec(m.sql);
  return ref;
}

/**
 * Refuses (400) an uploaded database whose schema is not the one router's migrations build at its level:
 * a trigger or view router does not create (one would run its SQL inside the daemon on every write), a
 * table, index or column that differs, or one that is missing. Allowed beyond the migrations: SQLite's
 * statistics tables, the export marker and the memory engine's vector table with its shadow tables.
 */
export function checkImportSchema(db: Db, dir: string, level: number): void {
  const ref = referenceSchema(dir, level);
  try {
    const want = objects(ref);
    const have = objects(db);
    const vec = have.get(VEC_TABLE);
    const hasVec = vec?.type === 'table' && VEC_SQL.test(normalize(vec.sql));
    for (const o of have.values()) {
      const expected = want.get(o.name);
      if (!expected) {
        if (o.type === 'table' && EXTRA_TABLES.has(o.name)) continue;
        if (hasVec && o.type === 'table' && (o.name === VEC_TABLE || o.name.startsWith(`${VEC_TABLE}_`))) continue;
        // SQLite's own index of a primary key or unique column (sql is null) on a table allowed above.
        const allowedTable = EXTRA_TABLES.has(o.tbl_name) || (hasVec && o.tbl_name.startsWith(`${VEC_TABLE}_`));
        if (o.type === 'index' && o.sql === null && allowedTable) continue;
        throw badRequest(`The uploaded database holds a ${o.type} ${shown(o.name)} that router does not create: refused (triggers, views and unknown objects are never imported).`);
      }
      if (expected.type !== o.type || expected.tbl_name !== o.tbl_name) throw badRequest(`The uploaded database's ${shown(o.name)} is not the ${expected.type} router creates.`);
      const same = o.type === 'table' ? columns(db, o.name) === columns(ref, o.name) && (o.sql === null) === (expected.sql === null) : normalize(o.sql) === normalize(expected.sql);
      if (!same) throw badRequest(`The uploaded database's ${o.type} ${shown(o.name)} differs from the one router creates at its migration level.`);
    }
    for (const o of want.values()) {
      if (!have.has(o.name)) throw badRequest(`The uploaded database is missing the ${o.type} ${shown(o.name)}: it is not a router database.`);
    }
  } finally {
    ref.close();
  }
}
