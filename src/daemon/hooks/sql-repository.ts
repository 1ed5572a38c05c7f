import type { SqlDriver } from '../store/driver.js';
import type { HookRepository, StoredHook } from './port.js';

interface Row {
  id: string;
  name: string;
  position: number;
  enabled: number;
  definition: string;
  created_at: string;
  updated_at: string;
}

function parse(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

function fromRow(r: Row): StoredHook {
  return { id: r.id, name: r.name, position: r.position, enabled: r.enabled === 1, definition: parse(r.definition), createdAt: r.created_at, updatedAt: r.updated_at };
}

/**
 * The hooks port over the driver seam (table middleware_hooks). Ties in position and creation time are
 * broken by `rowid`: SQLite's implicit one, an identity column of that name in the PostgreSQL table.
 */
export class SqlHookRepository implements HookRepository {
  constructor(private readonly driver: SqlDriver) {}

  async loadAll(): Promise<StoredHook[]> {
    const rows = await this.driver.query<Row>(
      'SELECT id, name, position, enabled, definition, created_at, updated_at FROM middleware_hooks ORDER BY position, created_at, rowid',
    );
    return rows.map(fromRow);
  }

  async count(): Promise<number> {
    const [row] = await this.driver.query<{ n: number }>('SELECT COUNT(*) AS n FROM middleware_hooks');
    return row?.n ?? 0;
  }

  async insert(h: StoredHook): Promise<void> {
    await this.driver.run(
      'INSERT INTO middleware_hooks (id, name, position, enabled, definition, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)',
      [h.id, h.name, h.position, h.enabled, JSON.stringify(h.definition), h.createdAt, h.updatedAt],
    );
  }

  async update(h: StoredHook): Promise<boolean> {
    const { changes } = await this.driver.run('UPDATE middleware_hooks SET name = ?, position = ?, enabled = ?, definition = ?, updated_at = ? WHERE id = ?', [
      h.name,
      h.position,
      h.enabled,
      JSON.stringify(h.definition),
      h.updatedAt,
      h.id,
    ]);
    return changes > 0;
  }

  async remove(id: string): Promise<boolean> {
    const { changes } = await this.driver.run('DELETE FROM middleware_hooks WHERE id = ?', [id]);
    return changes > 0;
  }
}
