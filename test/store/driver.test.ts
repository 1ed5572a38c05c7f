import { describe, expect, it } from 'vitest';
import { toPostgresPlaceholders, valuesList } from '../../src/daemon/store/driver.js';
import { adapterTitle, storageAdapters } from '../support/storage.js';

describe('placeholders', () => {
  it('numbers ? for PostgreSQL, leaving quoted text, quoted names and comments alone', () => {
    expect(toPostgresPlaceholders('SELECT * FROM t WHERE a = ? AND b = ?')).toBe('SELECT * FROM t WHERE a = $1 AND b = $2');
    expect(toPostgresPlaceholders("SELECT '?', 'it''s ?', \"we?rd\" FROM t WHERE a = ? -- why?\nAND b = ?")).toBe(
      "SELECT '?', 'it''s ?', \"we?rd\" FROM t WHERE a = $1 -- why?\nAND b = $2",
    );
    expect(valuesList(2, 3)).toBe('(?, ?, ?), (?, ?, ?)');
  });
});

for (const adapter of storageAdapters()) {
  describe.skipIf(adapter.unavailable)(adapterTitle('SqlDriver', adapter), () => {
    it('runs statements, binds every value type and reads counts back as numbers', async () => {
      const { driver } = await adapter.open();
      await driver.run('CREATE TABLE d (id TEXT PRIMARY KEY, n INTEGER, flag INTEGER, raw BYTEA, note TEXT)'.replace('BYTEA', driver.dialect === 'sqlite' ? 'BLOB' : 'BYTEA'));
      const put = 'INSERT INTO d (id, n, flag, raw, note) VALUES (?, ?, ?, ?, ?)';
      expect(await driver.run(put, ['a', 2, true, Buffer.from([1, 2, 255]), null])).toEqual({ changes: 1 });
      await driver.run(put, ['b', 40, false, null, "it's"]);
      const rows = await driver.query<{ id: string; n: number; flag: number; raw: Buffer | null; note: string | null }>('SELECT * FROM d ORDER BY id');
      expect(rows).toEqual([
        { id: 'a', n: 2, flag: 1, raw: Buffer.from([1, 2, 255]), note: null },
        { id: 'b', n: 40, flag: 0, raw: null, note: "it's" },
      ]);
      const [agg] = await driver.query<{ total: number; count: number }>('SELECT SUM(n) AS total, COUNT(*) AS count FROM d');
      expect(agg).toEqual({ total: 42, count: 2 });
      expect(await driver.run('UPDATE d SET n = n + 1 WHERE id IN (?, ?)', ['a', 'zz'])).toEqual({ changes: 1 });
    });

    it('commits a transaction that resolves and rolls back one that throws', async () => {
      const { driver } = await adapter.open();
      await driver.run('CREATE TABLE t (id TEXT PRIMARY KEY)');
      await driver.transaction(async (tx) => {
        await tx.run('INSERT INTO t (id) VALUES (?)', ['kept']);
      });
      await expect(
        driver.transaction(async (tx) => {
          await tx.run('INSERT INTO t (id) VALUES (?)', ['lost']);
          await tx.run('INSERT INTO t (id) VALUES (?)', ['kept']); // duplicate: the whole transaction goes
        }),
      ).rejects.toThrow();
      expect(await driver.query('SELECT id FROM t ORDER BY id')).toEqual([{ id: 'kept' }]);
    });

    it('queues concurrent transactions so neither sees half of the other', async () => {
      const { driver } = await adapter.open();
      await driver.run('CREATE TABLE c (id INTEGER PRIMARY KEY, v INTEGER NOT NULL)');
      await driver.run('INSERT INTO c (id, v) VALUES (1, 0)');
      const bump = () =>
        driver.transaction(async (tx) => {
          const [row] = await tx.query<{ v: number }>(`SELECT v FROM c WHERE id = 1${driver.dialect === 'postgres' ? ' FOR UPDATE' : ''}`);
          await tx.run('UPDATE c SET v = ? WHERE id = 1', [(row?.v ?? 0) + 1]);
        });
      await Promise.all(Array.from({ length: 10 }, bump));
      expect(await driver.query('SELECT v FROM c')).toEqual([{ v: 10 }]);
    });
  });
}
