/**
 * An online backup ends while another connection keeps writing (the usage writer's, under steady traffic):
 * SQLite restarts the copy after each such write, and onlineBackup (src/daemon/backups/store.ts) takes
 * more pages per step after each restart, so the copy finishes, consistent, instead of starting over forever.
 */
import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { onlineBackup } from '../../src/daemon/backups/store.js';

const dir = mkdtempSync(join(tmpdir(), 'router-backup-steps-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('online backup under writes from another connection', () => {
  it('finishes although every step is followed by a write, and the copy is whole', async () => {
    const file = join(dir, 'live.db');
    const live = new Database(file);
    live.pragma('journal_mode = WAL');
    live.exec('CREATE TABLE filler (id INTEGER PRIMARY KEY, data BLOB); CREATE TABLE writes (n INTEGER)');
    const fill = live.prepare('INSERT INTO filler (data) VALUES (randomblob(65536))');
    live.transaction(() => {
      for (let i = 0; i < 128; i++) fill.run(); // 8 MB: about 2000 pages, 20 steps of 100
    })();
    const writer = new Database(file);
    writer.pragma('synchronous = OFF'); // cheap writes: the test is about their timing, not their durability
    const write = writer.prepare('INSERT INTO writes (n) VALUES (?)');
    let writes = 0;
    let writing = true;
    // A write on every turn of the event loop: between any two backup steps.
    const loop = () => {
      if (!writing) return;
      write.run(++writes);
      setImmediate(loop);
    };
    setImmediate(loop);
    const copy = join(dir, 'copy.db');
    let timer: NodeJS.Timeout | undefined;
    const outcome = await Promise.race([
      onlineBackup(live, copy).then(() => 'finished'),
      new Promise((r) => (timer = setTimeout(() => r('still copying after 20 s'), 20_000))),
    ]);
    writing = false;
    clearTimeout(timer);
    writer.close();
    live.close();
    expect(outcome).toBe('finished');
    expect(writes).toBeGreaterThan(1); // the copy did restart

    const back = new Database(copy, { readonly: true });
    try {
      expect(back.pragma('integrity_check', { simple: true })).toBe('ok');
      expect((back.prepare('SELECT COUNT(*) AS n FROM filler').get() as { n: number }).n).toBe(128);
    } finally {
      back.close();
    }
  }, 60_000);
});
