import type { ComboRecord } from '../../shared/records.js';

/** What a write of a combo came to: stored, refused because its name is taken, or no such combo. */
export type ComboWrite = 'stored' | 'name-taken' | 'missing';

/**
 * The combos module's storage port: the `combos` table. The `ComboStore` keeps the snapshot the proxy
 * resolves combo names in; the port is touched at start, by management writes and by `reload()` (a
 * cluster node told that another node wrote). Implemented over SQLite and PostgreSQL by
 * `SqlComboRepository` (test/combos/port.test.ts).
 */
export interface ComboRepository {
  /** Every combo, in no particular order. */
  loadAll(): Promise<ComboRecord[]>;
  /** 'name-taken' when another combo has the name (names are unique). */
  insert(rec: ComboRecord): Promise<Exclude<ComboWrite, 'missing'>>;
  /** Writes every field but id and createdAt. */
  update(rec: ComboRecord): Promise<ComboWrite>;
  /** False when there was no such combo. */
  remove(id: string): Promise<boolean>;
}
