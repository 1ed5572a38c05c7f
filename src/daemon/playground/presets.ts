import { randomUUID } from 'node:crypto';
import type { Db } from '../store/db.js';
import type { Preset, PresetBody } from './schema.js';

/** Who a preset belongs to: an API key id, or null for the dashboard (session callers). */
export type PresetOwner = string | null;

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

/** `api_key_id IS ?` matches NULL to NULL, so one statement serves keys and the dashboard. */
const OWNED = 'api_key_id IS ?';

/**
 * Playground presets, one repository over `playground_presets`. Every call names the owner: a caller can
 * neither read nor change another owner's preset (it looks like an unknown id).
 */
export class PresetStore {
  constructor(private readonly db: Db) {}

  /** The owner's presets, newest first (rowid breaks ties within one millisecond). */
  list(owner: PresetOwner): Preset[] {
    const rows = this.db.prepare(`SELECT * FROM playground_presets WHERE ${OWNED} ORDER BY created_at DESC, rowid DESC`).all(owner) as Row[];
    return rows.map(fromRow);
  }

  get(owner: PresetOwner, id: string): Preset | undefined {
    const row = this.db.prepare(`SELECT * FROM playground_presets WHERE id = ? AND ${OWNED}`).get(id, owner) as Row | undefined;
    return row ? fromRow(row) : undefined;
  }

  create(owner: PresetOwner, body: PresetBody): Preset {
    const now = new Date().toISOString();
    const id = randomUUID();
    this.db
      .prepare(
        `INSERT INTO playground_presets (id, api_key_id, name, model, system, messages, parameters, tags, created_at, updated_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      )
      .run(id, owner, ...fields(body), now, now);
    return this.get(owner, id)!;
  }

  /** Replaces every field but id and createdAt; undefined when the owner has no such preset. */
  replace(owner: PresetOwner, id: string, body: PresetBody): Preset | undefined {
    const { changes } = this.db
      .prepare(
        `UPDATE playground_presets SET name = ?, model = ?, system = ?, messages = ?, parameters = ?, tags = ?, updated_at = ?
         WHERE id = ? AND ${OWNED}`,
      )
      .run(...fields(body), new Date().toISOString(), id, owner);
    return changes ? this.get(owner, id) : undefined;
  }

  remove(owner: PresetOwner, id: string): boolean {
    return this.db.prepare(`DELETE FROM playground_presets WHERE id = ? AND ${OWNED}`).run(id, owner).changes > 0;
  }
}

function fields(b: PresetBody): [string, string, string, string, string, string] {
  return [b.name, b.model, b.system, JSON.stringify(b.messages), JSON.stringify(b.parameters), JSON.stringify(b.tags)];
}
