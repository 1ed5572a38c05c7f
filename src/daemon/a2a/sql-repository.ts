import type { SqlDriver, SqlValue } from '../store/driver.js';
import { CANCELED_STATE, type A2aTaskRepository, type StoredTask, type TaskListQuery } from './port.js';

interface Row {
  id: string;
  context_id: string;
  state: string;
  owner: string;
  task: string;
  updated_at: number;
}

const COLUMNS = 'id, context_id, state, owner, task, updated_at';

const fromRow = (r: Row): StoredTask => ({ id: r.id, contextId: r.context_id, state: r.state, owner: r.owner, task: r.task, updatedAt: r.updated_at });

/** The A2A task port over the driver seam: one SQL text for SQLite and PostgreSQL (table a2a_tasks). */
export class SqlA2aTaskRepository implements A2aTaskRepository {
  constructor(private readonly driver: SqlDriver) {}

  async save(t: StoredTask): Promise<boolean> {
    const { changes } = await this.driver.run(
      `INSERT INTO a2a_tasks (id, context_id, state, owner, task, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (id) DO UPDATE SET state = excluded.state, task = excluded.task, updated_at = excluded.updated_at
       WHERE a2a_tasks.owner = excluded.owner AND a2a_tasks.state <> ?`,
      [t.id, t.contextId, t.state, t.owner, t.task, t.updatedAt, t.updatedAt, CANCELED_STATE],
    );
    return changes > 0;
  }

  async load(id: string): Promise<StoredTask | undefined> {
    const [row] = await this.driver.query<Row>(`SELECT ${COLUMNS} FROM a2a_tasks WHERE id = ?`, [id]);
    return row && fromRow(row);
  }

  async list(q: TaskListQuery): Promise<{ tasks: StoredTask[]; total: number }> {
    const conds = ['owner = ?'];
    const args: SqlValue[] = [q.owner];
    if (q.contextId) {
      conds.push('context_id = ?');
      args.push(q.contextId);
    }
    if (q.state) {
      conds.push('state = ?');
      args.push(q.state);
    }
    const where = conds.join(' AND ');
    const [count] = await this.driver.query<{ n: number }>(`SELECT COUNT(*) AS n FROM a2a_tasks WHERE ${where}`, args);
    const rows = await this.driver.query<Row>(`SELECT ${COLUMNS} FROM a2a_tasks WHERE ${where} ORDER BY updated_at DESC, id LIMIT ? OFFSET ?`, [...args, q.limit, q.offset]);
    return { tasks: rows.map(fromRow), total: Number(count?.n ?? 0) };
  }

  async states(ids: readonly string[]): Promise<Map<string, string>> {
    const out = new Map<string, string>();
    for (let i = 0; i < ids.length; i += 500) {
      const chunk = ids.slice(i, i + 500);
      const rows = await this.driver.query<{ id: string; state: string }>(`SELECT id, state FROM a2a_tasks WHERE id IN (${chunk.map(() => '?').join(', ')})`, chunk);
      for (const r of rows) out.set(r.id, r.state);
    }
    return out;
  }
}
