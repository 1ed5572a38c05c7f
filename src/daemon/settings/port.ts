/** One stored setting: its key, its value as stored (JSON text, secrets sealed) and when it was written. */
export interface SettingRow {
  key: string;
  /** JSON text; credential settings hold `{"enc": ...}` (sealed by the store, never by the port). */
  value: string;
  /** ISO-8601 time of the last write. */
  updatedAt: string;
}

/**
 * The settings module's storage port: the `settings` table as key/value rows. The `SettingsStore` keeps the
 * snapshot every reader uses; the port is touched at start, by writes, and by `reload()` (a cluster node
 * told that another node wrote). Rows of keys the settings schema does not know (the note vault's
 * credentials, the cluster's sealing check) live here too, and are reached through the store as well.
 * Implemented over SQLite and PostgreSQL by `SqlSettingsRepository` (test/settings/port.test.ts).
 */
export interface SettingsRepository {
  /** Every stored row, in no particular order. */
  loadAll(): Promise<SettingRow[]>;
  /** One row's value, or undefined. */
  get(key: string): Promise<string | undefined>;
  /** Writes (inserts or replaces) every row in one transaction, all stamped `updatedAt`. */
  putMany(rows: ReadonlyArray<{ key: string; value: string }>, updatedAt: string): Promise<void>;
  /** Writes a row only when the key has none; false when one was there (another node's, kept). */
  insertIfAbsent(key: string, value: string, updatedAt: string): Promise<boolean>;
  /** False when there was no such row. */
  remove(key: string): Promise<boolean>;
}
