/**
 * Copies the rows of a single machine's SQLite database into the PostgreSQL database of a cluster, table by
 * table, generically: the PostgreSQL schema (migrations/pg/) mirrors the SQLite one (same table and column
 * names, ISO TEXT times, INTEGER flags, TEXT JSON, BLOB/BYTEA), so every table PostgreSQL has and the SQLite
 * file has too is copied column by column; a SQLite table with no PostgreSQL twin yet is reported as skipped.
 * Used by `router cluster migrate` (cluster/migrate.ts).
 */
import type { Db } from '../store/db.js';
import type { SqlExecutor, SqlValue } from '../store/driver.js';
import { valuesList } from '../store/driver.js';
import type { PostgresDriver } from '../store/postgres-driver.js';

/** Tables that belong to the migration machinery of each database, never copied. */
const OWN_TABLES = new Set(['schema_migrations']);
/** Bound parameters per INSERT at most (PostgreSQL allows 65,535). */
const MAX_PARAMS = 30_000;
const MAX_ROWS = 500;

export interface CopiedTable {
  table: string;
  rows: number;
  /** SQLite columns the PostgreSQL table has no place for (not copied): a schema drift to look at. */
  droppedColumns?: string[];
}

export interface SkippedTable {
  table: string;
  rows: number;
  reason: string;
}

export interface CopyReport {
  copied: CopiedTable[];
  skipped: SkippedTable[];
}

interface PgColumn {
  name: string;
  type: string;
  /** Filled by a sequence or an identity: its sequence is moved past the copied ids. */
  sequenced: boolean;
  /** GENERATED ALWAYS AS IDENTITY: an explicit value needs OVERRIDING SYSTEM VALUE. */
  always: boolean;
}

const quote = (name: string) => `"${name.replaceAll('"', '""')}"`;

/** The base tables of the current schema, each with its columns in order. */
export async function postgresTables(pg: SqlExecutor): Promise<Map<string, PgColumn[]>> {
  const rows = await pg.query<{ table_name: string; column_name: string; data_type: string; column_default: string | null; is_identity: string; identity_generation: string | null }>(
    `SELECT c.table_name, c.column_name, c.data_type, c.column_default, c.is_identity, c.identity_generation
       FROM information_schema.columns c
       JOIN information_schema.tables t ON t.table_schema = c.table_schema AND t.table_name = c.table_name
      WHERE c.table_schema = current_schema() AND t.table_type = 'BASE TABLE'
      ORDER BY c.table_name, c.ordinal_position`,
  );
  const out = new Map<string, PgColumn[]>();
  for (const r of rows) {
    let cols = out.get(r.table_name);
    if (!cols) out.set(r.table_name, (cols = []));
    cols.push({
      name: r.column_name,
      type: r.data_type,
      sequenced: r.is_identity === 'YES' || (r.column_default ?? '').startsWith('nextval('),
      always: r.is_identity === 'YES' && r.identity_generation === 'ALWAYS',
    });
  }
  return out;
}

/** Tables of the current schema that hold at least one row (migration bookkeeping aside), with their counts. */
export async function nonEmptyTables(pg: SqlExecutor): Promise<Array<{ table: string; rows: number }>> {
  const out: Array<{ table: string; rows: number }> = [];
  for (const table of (await postgresTables(pg)).keys()) {
    if (OWN_TABLES.has(table)) continue;
    const [row] = await pg.query<{ n: number }>(`SELECT COUNT(*) AS n FROM ${quote(table)}`);
    if (row && row.n > 0) out.push({ table, rows: row.n });
  }
  return out;
}

/** The SQLite file's ordinary tables: virtual tables (full-text, vector indexes) and their shadow tables apart. */
function sqliteTables(db: Db): { tables: string[]; virtual: string[] } {
  const all = db.prepare("SELECT name, sql FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name").all() as Array<{ name: string; sql: string | null }>;
  const virtual = all.filter((t) => /^CREATE VIRTUAL TABLE/i.test(t.sql ?? '')).map((t) => t.name);
  const shadow = (name: string) => virtual.some((v) => name.startsWith(`${v}_`));
  const tables = all.map((t) => t.name).filter((n) => !OWN_TABLES.has(n) && !virtual.includes(n) && !shadow(n));
  return { tables, virtual };
}

/** Parents before children: the order in which foreign keys let the tables be filled. */
async function fillOrder(pg: SqlExecutor, tables: string[]): Promise<string[]> {
  const edges = await pg.query<{ child: string; parent: string }>(
    `SELECT c.relname AS child, p.relname AS parent
       FROM pg_constraint k JOIN pg_class c ON c.oid = k.conrelid JOIN pg_class p ON p.oid = k.confrelid
      WHERE k.contype = 'f' AND k.connamespace = current_schema()::regnamespace`,
  );
  const parents = new Map<string, Set<string>>();
  for (const e of edges) if (e.child !== e.parent) (parents.get(e.child) ?? parents.set(e.child, new Set()).get(e.child)!).add(e.parent);
  const out: string[] = [];
  const seen = new Set<string>();
  const visit = (t: string, path: Set<string>) => {
    if (seen.has(t) || path.has(t)) return;
    path.add(t);
    for (const p of parents.get(t) ?? []) if (tables.includes(p)) visit(p, path);
    seen.add(t);
    out.push(t);
  };
  for (const t of [...tables].sort()) visit(t, new Set());
  return out;
}

/** A SQLite value as the PostgreSQL column takes it (SQLite's typing is per value, PostgreSQL's per column). */
function convert(v: unknown, type: string): SqlValue {
  if (v === null || v === undefined) return null;
  if (typeof v === 'bigint') v = Number.isSafeInteger(Number(v)) ? Number(v) : v.toString();
  if (type === 'text' || type === 'character varying' || type === 'jsonb' || type === 'json') {
    return Buffer.isBuffer(v) ? v.toString('utf8') : String(v);
  }
  if (type === 'boolean') return v === 1 || v === '1' || v === true;
  if (type === 'bytea') return Buffer.isBuffer(v) ? v : Buffer.from(String(v), 'utf8');
  return v as SqlValue;
}

/**
 * Copies every SQLite table that has a PostgreSQL twin, in one transaction (all or nothing), and moves the
 * id sequences past the copied ids. Returns rows per table and what was skipped.
 */
export async function copyTables(db: Db, pg: PostgresDriver): Promise<CopyReport> {
  const target = await postgresTables(pg);
  const { tables, virtual } = sqliteTables(db);
  const count = (t: string) => (db.prepare(`SELECT COUNT(*) AS n FROM ${quote(t)}`).get() as { n: number }).n;
  const skipped: SkippedTable[] = [];
  for (const t of tables) if (!target.has(t)) skipped.push({ table: t, rows: count(t), reason: 'no PostgreSQL table yet (the module is not on the shared database)' });
  for (const t of virtual) skipped.push({ table: t, rows: count(t), reason: 'a search index: each node rebuilds it from the copied rows' });
  const shared = tables.filter((t) => target.has(t));
  const order = await fillOrder(pg, shared);
  const copied = await pg.transaction(async (tx) => {
    const out: CopiedTable[] = [];
    for (const table of order) out.push(await copyTable(db, tx, table, target.get(table)!));
    return out;
  });
  return { copied: copied.sort((a, b) => a.table.localeCompare(b.table)), skipped: skipped.sort((a, b) => a.table.localeCompare(b.table)) };
}

async function copyTable(db: Db, tx: SqlExecutor, table: string, pgColumns: PgColumn[]): Promise<CopiedTable> {
  const sqliteColumns = (db.prepare(`PRAGMA table_info(${quote(table)})`).all() as Array<{ name: string }>).map((c) => c.name);
  const columns = pgColumns.filter((c) => sqliteColumns.includes(c.name));
  const dropped = sqliteColumns.filter((n) => !pgColumns.some((c) => c.name === n));
  const report: CopiedTable = { table, rows: 0, ...(dropped.length ? { droppedColumns: dropped } : {}) };
  if (columns.length === 0) return report;
  const names = columns.map((c) => quote(c.name)).join(', ');
  const overriding = columns.some((c) => c.always) ? ' OVERRIDING SYSTEM VALUE' : '';
  const perInsert = Math.max(1, Math.min(MAX_ROWS, Math.floor(MAX_PARAMS / columns.length)));
  const read = db.prepare(`SELECT ${names} FROM ${quote(table)}`).raw(true).safeIntegers(true);
  let batch: SqlValue[][] = [];
  const flush = async () => {
    if (batch.length === 0) return;
    await tx.run(`INSERT INTO ${quote(table)} (${names})${overriding} VALUES ${valuesList(batch.length, columns.length)}`, batch.flat());
    report.rows += batch.length;
    batch = [];
  };
  for (const row of read.iterate() as Iterable<unknown[]>) {
    batch.push(row.map((v, i) => convert(v, columns[i]!.type)));
    if (batch.length >= perInsert) await flush();
  }
  await flush();
  for (const c of columns.filter((col) => col.sequenced)) {
    await tx.query(`SELECT setval(pg_get_serial_sequence(?, ?), COALESCE((SELECT MAX(${quote(c.name)}) FROM ${quote(table)}), 0) + 1, false)`, [quote(table), c.name]);
  }
  return report;
}
