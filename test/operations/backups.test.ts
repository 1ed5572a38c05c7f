/**
 * Backups, export and import through the real daemon and real SQLite files: a backup taken while requests
 * flow is consistent; an export moves providers, combos, keys, usage and memory to a second daemon, with
 * credentials (passphrase) or marked for re-entry (no key); damaged, foreign and newer-schema files are
 * refused with 400 and change nothing.
 */
import Database from 'better-sqlite3';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { migrate } from '../../src/daemon/store/migrate.js';

const MIGRATIONS = fileURLToPath(new URL('../../migrations/', import.meta.url));
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startMockUpstream, type MockUpstream } from '../mocks/upstream.js';
import { addOpenAi, chat, raw, sleep, startRouter, waitForRestart, type RouterProcess } from './helpers.js';

const PASSPHRASE = 'correct horse battery staple';
const SECRET = 'sk-live-backup-test-0123456789';

let mock: MockUpstream;
let a: RouterProcess;
let b: RouterProcess;
let key: string;
let scratch: string;
const homes: string[] = [];

beforeAll(async () => {
  mock = await startMockUpstream();
  scratch = mkdtempSync(join(tmpdir(), 'router-backup-files-'));
  // A database with 24 MB of filler before the daemon's own tables: its backup takes many steps, so
  // requests have to be served between them.
  const homeA = mkdtempSync(join(tmpdir(), 'router-backup-a-'));
  homes.push(homeA);
  const seed = new Database(join(homeA, 'router.db'));
  seed.exec('CREATE TABLE filler (id INTEGER PRIMARY KEY, data BLOB)');
  const put = seed.prepare('INSERT INTO filler (data) VALUES (randomblob(65536))');
  seed.transaction(() => {
    for (let i = 0; i < 384; i++) put.run();
  })();
  seed.close();
  a = await startRouter({ home: homeA });
  key = await a.createKey(['proxy']);
  await addOpenAi(a, mock, SECRET);
}, 60_000);

afterAll(async () => {
  await a?.stop().catch(() => {});
  await b?.stop().catch(() => {});
  await mock?.close();
  for (const h of [...homes, scratch]) rmSync(h, { recursive: true, force: true });
});

describe('backups', () => {
  it('a backup taken under load is consistent and requests keep flowing while it runs', async () => {
    let running = true;
    const statuses: number[] = [];
    const finishedAt: number[] = [];
    const worker = async () => {
      while (running) {
        const res = await chat(a, key, 'openai/gpt-4o-mini');
        await res.arrayBuffer();
        statuses.push(res.status);
        finishedAt.push(Date.now());
      }
    };
    const workers = Array.from({ length: 6 }, worker);
    await sleep(200);
    const started = Date.now();
    const created = await raw(a, 'POST', '/api/db-backups', { headers: { 'content-type': 'application/json' } });
    const ended = Date.now();
    await sleep(100);
    running = false;
    await Promise.all(workers);

    expect(created.status).toBe(201);
    expect(created.json).toMatchObject({ id: expect.any(String), reason: 'manual', size: expect.any(Number) });
    expect(created.json.size).toBeGreaterThan(20 * 1024 * 1024);
    // Requests were answered during the backup, and every one succeeded.
    expect(finishedAt.filter((t) => t > started && t < ended).length).toBeGreaterThan(0);
    expect(statuses.every((s) => s === 200)).toBe(true);

    const list = (await a.manage('GET', '/api/db-backups')).json.backups;
    expect(list[0]).toEqual(created.json);

    const folder = join(a.home, 'backups');
    const file = join(folder, `${created.json.id}.db`);
    expect(statSync(folder).mode & 0o777).toBe(0o700);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const copy = new Database(file, { readonly: true });
    try {
      expect(copy.pragma('integrity_check', { simple: true })).toBe('ok');
      expect((copy.prepare('SELECT COUNT(*) AS n FROM provider_connections').get() as { n: number }).n).toBe(1);
      expect((copy.prepare('SELECT COUNT(*) AS n FROM api_keys').get() as { n: number }).n).toBe(1);
    } finally {
      copy.close();
    }
  }, 60_000);

  it('an export moves providers, combos, keys, usage and memory to a second daemon; secrets only with the passphrase', async () => {
    // The filler table of the test above is not router's: an import refuses unknown tables (issue 27).
    const live = new Database(join(a.home, 'router.db'));
    live.exec('DROP TABLE IF EXISTS filler');
    live.close();
    expect((await a.manage('POST', '/api/combos', { name: 'team', models: ['openai/gpt-4o-mini'] })).status).toBe(201);
    expect((await a.manage('POST', '/api/memory', { content: 'The user prefers tea.', key: 'drink' })).status).toBe(201);
    for (let i = 0; i < 2; i++) expect((await chat(a, key, 'team')).status).toBe(200);

    const sealed = await raw(a, 'POST', '/api/db-backups/export', {
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ passphrase: PASSPHRASE }),
    });
    expect(sealed.status).toBe(200);
    expect(sealed.headers.get('content-type')).toBe('application/vnd.sqlite3');
    const plain = await raw(a, 'GET', '/api/db-backups/export');
    expect(plain.status).toBe(200);
    expect(plain.bytes.subarray(0, 15).toString()).toBe('SQLite format 3');
    const sealedFile = join(scratch, 'sealed.db');
    const plainFile = join(scratch, 'plain.db');
    writeFileSync(sealedFile, sealed.bytes);
    writeFileSync(plainFile, plain.bytes);
    // The key travels only wrapped: neither file holds the raw secret.key bytes.
    const rawKey = readFileSync(join(a.home, 'secret.key'));
    expect(sealed.bytes.includes(rawKey)).toBe(false);
    expect(plain.bytes.includes(rawKey)).toBe(false);
    expect(sealed.bytes.includes(Buffer.from(SECRET))).toBe(false);

    const snapshot = async (r: RouterProcess) => ({
      providers: (await r.manage('GET', '/api/providers')).json.connections.map((c: any) => ({ id: c.id, name: c.name, provider: c.provider })),
      combos: (await r.manage('GET', '/api/combos')).json.combos.map((c: any) => ({ id: c.id, name: c.name, models: c.models })),
      keys: (await r.manage('GET', '/api/keys')).json.keys.map((k: any) => ({ id: k.id, name: k.name, scopes: k.scopes })),
      logs: (await r.manage('GET', '/api/logs?limit=100')).json.logs.map((l: any) => ({ id: l.id, model: l.model, status: l.status })),
      memory: (await r.manage('GET', '/api/memory')).json.data.map((m: any) => ({ id: m.id, content: m.content })),
    });
    const expected = await snapshot(a);
    expect(expected.logs.length).toBeGreaterThanOrEqual(3);
    expect(expected.memory).toHaveLength(1);

    b = await startRouter();
    homes.push(b.home);

    // Without the key: everything arrives, and the connection waits for new credentials.
    let pid = b.pid;
    const keyless = await raw(b, 'POST', '/api/db-backups/import', { headers: { 'content-type': 'application/octet-stream' }, body: readFileSync(plainFile) });
    expect(keyless.status, JSON.stringify(keyless.json)).toBe(200);
    expect(keyless.json).toMatchObject({ ok: true, restarting: true, secrets: { kept: 0, reencrypted: 0, needReentry: 1 }, safetyBackup: { reason: 'pre-import' } });
    pid = await waitForRestart(b.home, b.url, pid);
    expect(await snapshot(b)).toEqual(expected);
    const waiting = (await b.manage('GET', '/api/providers')).json.connections[0];
    expect(waiting).toMatchObject({ isActive: false, testStatus: 'needs_credentials' });
    expect(waiting.apiKey ?? null).toBeNull();
    expect(waiting.lastError).toMatch(/credentials need re-entry/);
    const before = mock.requests.length;
    expect((await chat(b, key, 'openai/gpt-4o-mini')).status).not.toBe(200);
    expect(mock.requests.length).toBe(before);

    // A wrong passphrase is refused and changes nothing.
    const wrong = await raw(b, 'POST', '/api/db-backups/import', {
      headers: { 'content-type': 'application/octet-stream', 'x-router-backup-passphrase': 'not the passphrase' },
      body: readFileSync(sealedFile),
    });
    expect(wrong.status).toBe(400);
    expect(wrong.json.error.message).toMatch(/passphrase/i);

    // With the passphrase: the credential is re-encrypted with this machine's key and works.
    const withKey = await raw(b, 'POST', '/api/db-backups/import', {
      headers: { 'content-type': 'application/vnd.sqlite3', 'x-router-backup-passphrase': encodeURIComponent(PASSPHRASE) },
      body: readFileSync(sealedFile),
    });
    expect(withKey.status).toBe(200);
    expect(withKey.json.secrets).toEqual({ kept: 0, reencrypted: 1, needReentry: 0 });
    pid = await waitForRestart(b.home, b.url, pid);
    expect(await snapshot(b)).toEqual(expected);
    const restored = (await b.manage('GET', '/api/providers')).json.connections[0];
    expect(restored).toMatchObject({ isActive: true, testStatus: null });
    const res = await chat(b, key, 'team');
    expect(res.status).toBe(200);
    expect(mock.requests.at(-1)!.headers.authorization).toBe(`Bearer ${SECRET}`);
    // B keeps its own secret key: the imported credential was sealed again with it.
    expect(readFileSync(join(b.home, 'secret.key')).equals(rawKey)).toBe(false);
    // Two imports, two safety backups of what they replaced.
    const reasons = (await b.manage('GET', '/api/db-backups')).json.backups.map((x: any) => x.reason);
    expect(reasons).toEqual(['pre-import', 'pre-import']);
  }, 180_000); // three daemon starts: minutes on a loaded machine

  it('refuses damaged, foreign and newer-schema files with 400 and leaves the database as it was', async () => {
    const good = readFileSync(join(scratch, 'plain.db'));
    const damaged = Buffer.from(good);
    damaged.fill(0x5a, 8192, damaged.length - 4096);
    const newer = join(scratch, 'newer.db');
    writeFileSync(newer, good);
    const db = new Database(newer);
    db.prepare("INSERT INTO schema_migrations (version, name, checksum, applied_at) VALUES (9999, '9999_future.sql', 'x', '2030-01-01')").run();
    db.close();
    const foreign = join(scratch, 'foreign.db');
    const other = new Database(foreign);
    other.exec('CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT); INSERT INTO notes (body) VALUES (1)');
    other.close();

    const providersBefore = (await b.manage('GET', '/api/providers')).json;
    const backupsBefore = (await b.manage('GET', '/api/db-backups')).json;
    const cases: Array<[string, Buffer, RegExp]> = [
      ['damaged', damaged, /damaged|malformed|cannot be opened/i],
      ['newer', readFileSync(newer), /newer router \(migration level 9999; this build knows \d+\)/],
      ['foreign', readFileSync(foreign), /not a router database/],
      ['text', Buffer.from('hello, this is not a database'), /not a SQLite database/],
    ];
    for (const [name, body, message] of cases) {
      const r = await raw(b, 'POST', '/api/db-backups/import', { headers: { 'content-type': 'application/octet-stream' }, body });
      expect(r.status, name).toBe(400);
      expect(r.json.error.message, name).toMatch(message);
    }
    await sleep(300);
    expect((await b.manage('GET', '/api/system/status')).json.pid).toBe(Number(JSON.parse(readFileSync(join(b.home, 'router.pid'), 'utf8')).pid));
    expect((await b.manage('GET', '/api/providers')).json).toEqual(providersBefore);
    expect((await b.manage('GET', '/api/db-backups')).json).toEqual(backupsBefore);
    // No upload is left behind in the backups folder.
    const leftovers = (await import('node:fs')).readdirSync(join(b.home, 'backups')).filter((f) => f.startsWith('.'));
    expect(leftovers).toEqual([]);
  }, 60_000);

  it('an upload type a web page can send is refused before anything is read', async () => {
    for (const type of ['text/plain', 'multipart/form-data; boundary=x', 'application/x-www-form-urlencoded']) {
      const r = await raw(b, 'POST', '/api/db-backups/import', { headers: { 'content-type': type }, body: 'x' });
      expect(r.status, type).toBe(415);
    }
    // A cross-site page cannot send the file type without a preflight, and an Origin it sends is refused.
    const page = await raw(b, 'POST', '/api/db-backups/import', {
      headers: { 'content-type': 'application/octet-stream', origin: 'https://evil.example' },
      body: 'x',
    });
    expect(page.status).toBe(403);
    // Other POST routes still take JSON only.
    const other = await raw(b, 'POST', '/api/db-backups', { headers: { 'content-type': 'application/octet-stream' } });
    expect(other.status).toBe(415);
  });
});

describe('restart', () => {
  it('POST /api/system/restart starts a new daemon process that keeps serving on the same address', async () => {
    const oldPid = JSON.parse(readFileSync(join(a.home, 'router.pid'), 'utf8')).pid as number;
    const r = await raw(a, 'POST', '/api/system/restart', { headers: { 'content-type': 'application/json' } });
    expect(r.status).toBe(202);
    expect(r.json).toEqual({ ok: true, pid: oldPid, restarting: true });
    const pid = await waitForRestart(a.home, a.url, oldPid);
    expect(pid).not.toBe(oldPid);
    expect((await chat(a, key, 'openai/gpt-4o-mini')).status).toBe(200);
    const status = (await a.manage('GET', '/api/system/status')).json;
    expect(status.pid).toBe(pid);
    expect(status.host).toMatchObject({
      node: process.version,
      platform: process.platform,
      dataFolder: a.home,
      database: { path: join(a.home, 'router.db'), sizeBytes: expect.any(Number) },
      listening: [{ host: '127.0.0.1', port: a.port, url: a.url }],
    });
    expect(status.host.database.sizeBytes).toBeGreaterThan(20 * 1024 * 1024);
  }, 60_000);
});

describe('before migrations', () => {
  it('a database with pending migrations is backed up before they run', async () => {
    const home = mkdtempSync(join(tmpdir(), 'router-premig-'));
    homes.push(home);
    mkdirSync(home, { recursive: true });
    // A database one migration behind this build, made by running every migration but the last (a
    // database whose record of the last migration was deleted would still carry its schema change).
    const older = mkdtempSync(join(tmpdir(), 'router-premig-migrations-'));
    homes.push(older);
    const files = readdirSync(MIGRATIONS).filter((f) => /^\d+_.*\.sql$/.test(f)).sort();
    for (const f of files.slice(0, -1)) writeFileSync(join(older, f), readFileSync(join(MIGRATIONS, f)));
    const db = new Database(join(home, 'router.db'));
    migrate(db, older);
    const last = { v: Number(files.at(-1)!.slice(0, 4)) };
    db.close();
    const r = await startRouter({ home });
    try {
      const list = (await r.manage('GET', '/api/db-backups')).json.backups;
      expect(list.map((x: any) => x.reason)).toEqual(['pre-migration']);
      const copy = new Database(join(home, 'backups', `${list[0].id}.db`), { readonly: true });
      expect((copy.prepare('SELECT MAX(version) AS v FROM schema_migrations').get() as { v: number }).v).toBe(last.v - 1);
      copy.close();
    } finally {
      await r.stop();
    }
  }, 60_000);
});
