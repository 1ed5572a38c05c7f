/**
 * Crafted database imports (issue 27 item 6): an upload whose schema is not router's is refused with 400
 * before anything is applied. A trigger or view router does not create (it would run inside the daemon),
 * an unknown table, a table with other columns (which used to fail later with SQLite's own error as a 500)
 * are refused; a real router database (with the memory engine's vector table) still imports. Through the
 * real route in-process (`POST /api/db-backups/import`, loopback, a manage key) with real SQLite files.
 */
import { copyFileSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import * as sqliteVec from 'sqlite-vec';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bootServices, buildApp, closeServices } from '../../src/daemon/boot.js';
import type { Services } from '../../src/daemon/services.js';
import { migrate } from '../../src/daemon/store/migrate.js';

let home: string;
let services: Services;
let app: ReturnType<typeof buildApp>;
let manageKey: string;
let base: string;
const restarts: string[] = [];

beforeAll(async () => {
  home = mkdtempSync(join(tmpdir(), 'router-import-schema-'));
  services = await bootServices({ home, host: '127.0.0.1', port: 0 });
  services.requestRestart = (reason: string) => {
    restarts.push(reason);
  };
  app = buildApp(services);
  manageKey = (await services.keys.create('importer', ['manage'])).key;
  // A real router database at this build's level, as a second state folder would hold it.
  base = join(home, 'base.db');
  const db = new Database(base);
  sqliteVec.load(db);
  migrate(db);
  db.pragma('journal_mode = DELETE');
  db.close();
});

afterAll(() => {
  if (services) closeServices(services);
  if (home) rmSync(home, { recursive: true, force: true });
});

/** A copy of the real database changed by `sql`. */
function crafted(name: string, sql: string): string {
  const file = join(home, `${name}.db`);
  copyFileSync(base, file);
  const db = new Database(file);
  sqliteVec.load(db);
  db.exec(sql);
  db.close();
  return file;
}

async function upload(file: string): Promise<{ status: number; json: any }> {
  const res = await app.request(
    'http://127.0.0.1/api/db-backups/import',
    { method: 'POST', headers: { authorization: `Bearer ${manageKey}`, 'content-type': 'application/vnd.sqlite3' }, body: readFileSync(file) },
    { remoteAddress: '127.0.0.1' },
  );
  const text = await res.text();
  return { status: res.status, json: text ? JSON.parse(text) : null };
}

describe('database import validates the schema', () => {
  it.each([
    ['a trigger', 'CREATE TRIGGER steal AFTER INSERT ON api_keys BEGIN DELETE FROM webhooks; END;', /trigger "steal"/],
    ['a view', 'CREATE VIEW peek AS SELECT * FROM provider_connections;', /view "peek"/],
    ['an unknown table', 'CREATE TABLE extra (x TEXT);', /table "extra"/],
    ['a table with other columns', 'DROP TABLE provider_connections; CREATE TABLE provider_connections (id TEXT PRIMARY KEY);', /provider_connections/],
    ['a changed trigger of its own', 'DROP TRIGGER memories_fts_ai; CREATE TRIGGER memories_fts_ai AFTER INSERT ON memories BEGIN DELETE FROM api_keys; END;', /memories_fts_ai/],
  ])('refuses %s with 400 and applies nothing', async (_what, sql, message) => {
    const r = await upload(crafted(_what.replace(/\W+/g, '-'), sql));
    expect(r.status, JSON.stringify(r.json)).toBe(400);
    expect(r.json.error).toMatchObject({ type: 'invalid_request_error', message: expect.stringMatching(message) });
    expect(JSON.stringify(r.json)).not.toMatch(/SqliteError|SQLITE_|\/tmp\//);
    expect(restarts).toEqual([]);
    // The live database is untouched and the daemon keeps answering.
    expect(services.keys.list().map((k) => k.name)).toEqual(['importer']);
  });

  it('imports a real router database, also one holding the memory vector table', async () => {
    const file = crafted('with-vec', "CREATE VIRTUAL TABLE memories_vec USING vec0(scope text partition key, embedding float[8] distance_metric=cosine); INSERT INTO memories_vec(rowid, scope, embedding) VALUES (1, 'g', '[1,2,3,4,5,6,7,8]');");
    const r = await upload(file);
    expect(r.status, JSON.stringify(r.json)).toBe(200);
    expect(r.json).toMatchObject({ ok: true, restarting: true });
    expect(restarts).toEqual(['database import']);
  });
});
