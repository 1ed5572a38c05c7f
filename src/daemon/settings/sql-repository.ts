import type { SqlDriver } from '../store/driver.js';
import type { SqliteDriver } from '../store/sqlite-driver.js';
import type { SettingRow, SettingsRepository } from './port.js';

interface Row {
  key: string;
  value: string;
  updated_at: string;
}

const UPSERT = 'INSERT INTO settings (key, value, updated_at) VALUES (?, ?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at';

const LOAD = 'SELECT key, value, updated_at FROM settings';
const fromRow = (r: Row): SettingRow => ({ key: r.key, value: r.value, updatedAt: r.updated_at });

/** Loads every stored setting synchronously from the embedded file (tests and tools that cannot wait). */
export function loadSettingsSync(driver: SqliteDriver): SettingRow[] {
  return driver.querySync<Row>(LOAD).map(fromRow);
}

/** The settings port over the driver seam: one SQL text for SQLite and PostgreSQL (table settings). */
export class SqlSettingsRepository implements SettingsRepository {
  constructor(private readonly driver: SqlDriver) {}

  async loadAll(): Promise<SettingRow[]> {
    return (await this.driver.query<Row>(LOAD)).map(fromRow);
  }

  async get(key: string): Promise<string | undefined> {
    const rows = await this.driver.query<{ value: string }>('SELECT value FROM settings WHERE key = ?', [key]);
    return rows[0]?.value;
  }

  async putMany(rows: ReadonlyArray<{ key: string; value: string }>, updatedAt: string): Promise<void> {
    if (rows.length === 0) return;
    await this.driver.transaction(async (tx) => {
      for (const row of rows) await tx.run(UPSERT, [row.key, row.value, updatedAt]);
    });
  }

  async insertIfAbsent(key: string, value: string, updatedAt: string): Promise<boolean> {
    const { changes } = await this.driver.run('INSERT INTO settings (key, value, updated_at) VALUES (?, ?, ?) ON CONFLICT(key) DO NOTHING', [key, value, updatedAt]);
    return changes > 0;
  }

  async remove(key: string): Promise<boolean> {
    const { changes } = await this.driver.run('DELETE FROM settings WHERE key = ?', [key]);
    return changes > 0;
  }
}
