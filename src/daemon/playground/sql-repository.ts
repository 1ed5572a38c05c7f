import type { SqlDriver } from '../store/driver.js';
import type { PresetOwner, PresetRepository } from './port.js';
import type { Preset, PresetBody } from './schema.js';

interface Row {
  id: string;
  name: string;
  model: string;
  system: string;
  messages: string;
  parameters: string;
  tags: string;
  created_at: string;
  updated_at: string;
}

const COLUMNS = 'id, name, model, system, messages, parameters, tags, created_at, updated_at';

/** Matches NULL to NULL (SQLite 3.39+ and PostgreSQL), so one statement serves keys and the dashboard. */
const OWNED = 'api_key_id IS NOT DISTINCT FROM ?';

function fromRow(row: Row): Preset {
  return {
    id: row.id,
    name: row.name,
    model: row.model,
    system: row.system,
    messages: JSON.parse(row.messages) as Preset['messages'],
    parameters: JSON.parse(row.parameters) as Preset['parameters'],
    tags: JSON.parse(row.tags) as string[],
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

function fields(b: PresetBody): [string, string, string, string, string, string] {
  return [b.name, b.model, b.system, JSON.stringify(b.messages), JSON.stringify(b.parameters), JSON.stringify(b.tags)];
}

/**
 * The presets port over the driver seam (table playground_presets). Ties in creation time are broken by
 * `rowid`: SQLite's implicit one, and an identity column of that name in the PostgreSQL table.
 */
export class SqlPresetRepository implements PresetRepository {
  constructor(private readonly driver: SqlDriver) {}

  async list(owner: PresetOwner): Promise<Preset[]> {
    const rows = await this.driver.query<Row>(`SELECT ${COLUMNS} FROM playground_presets WHERE ${OWNED} ORDER BY created_at DESC, rowid DESC`, [owner]);
    return rows.map(fromRow);
  }

  async get(owner: PresetOwner, id: string): Promise<Preset | undefined> {
    const [row] = await this.driver.query<Row>(`SELECT ${COLUMNS} FROM playground_presets WHERE id = ? AND ${OWNED}`, [id, owner]);
    return row ? fromRow(row) : undefined;
  }

  async insert(owner: PresetOwner, p: Preset): Promise<void> {
    await this.driver.run(
      `INSERT INTO playground_presets (id, api_key_id, name, model, system, messages, parameters, tags, created_at, updated_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      [p.id, owner, ...fields(p), p.createdAt, p.updatedAt],
    );
  }

  async replace(owner: PresetOwner, id: string, body: PresetBody, updatedAt: string): Promise<boolean> {
    const { changes } = await this.driver.run(
      `UPDATE playground_presets SET name = ?, model = ?, system = ?, messages = ?, parameters = ?, tags = ?, updated_at = ?
       WHERE id = ? AND ${OWNED}`,
      [...fields(body), updatedAt, id, owner],
    );
    return changes > 0;
  }

  async remove(owner: PresetOwner, id: string): Promise<boolean> {
    const { changes } = await this.driver.run(`DELETE FROM playground_presets WHERE id = ? AND ${OWNED}`, [id, owner]);
    return changes > 0;
  }
}
