import { type ListTasksRequest, type ListTasksResponse, Task, TaskState } from '@a2a-js/sdk';
import type { ServerCallContext, TaskStore } from '@a2a-js/sdk/server';
import type { Db } from '../store/db.js';

/**
 * A2A tasks persisted in SQLite (table a2a_tasks): the whole task as the SDK's JSON form, with its state and
 * owner as columns. A task is visible only to the caller that created it: `load` by anyone else finds
 * nothing, which the SDK answers as "task not found".
 */
export class SqliteTaskStore implements TaskStore {
  private readonly upsert;
  private readonly select;

  constructor(private readonly db: Db) {
    this.upsert = db.prepare(
      `INSERT INTO a2a_tasks (id, context_id, state, owner, task, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT(id) DO UPDATE SET state = excluded.state, task = excluded.task, updated_at = excluded.updated_at
       WHERE a2a_tasks.owner = excluded.owner`,
    );
    this.select = db.prepare('SELECT owner, task FROM a2a_tasks WHERE id = ?');
  }

  async save(task: Task, context: ServerCallContext): Promise<void> {
    const now = Date.now();
    const state = TaskState[task.status?.state ?? TaskState.TASK_STATE_UNSPECIFIED] ?? 'TASK_STATE_UNSPECIFIED';
    this.upsert.run(task.id, task.contextId, state, ownerOf(context), JSON.stringify(Task.toJSON(task)), now, now);
  }

  async load(taskId: string, context: ServerCallContext): Promise<Task | undefined> {
    const row = this.select.get(taskId) as { owner: string; task: string } | undefined;
    if (!row || row.owner !== ownerOf(context)) return undefined;
    return Task.fromJSON(JSON.parse(row.task));
  }

  /** The caller's tasks, newest first; filters by context and state; paged by an offset token. */
  async list(params: ListTasksRequest, context: ServerCallContext): Promise<ListTasksResponse> {
    const size = Math.min(Math.max(params.pageSize ?? 50, 1), 100);
    const offset = /^\d{1,9}$/.test(params.pageToken) ? Number(params.pageToken) : 0;
    const conds = ['owner = ?'];
    const args: unknown[] = [ownerOf(context)];
    if (params.contextId) {
      conds.push('context_id = ?');
      args.push(params.contextId);
    }
    if (params.status) {
      conds.push('state = ?');
      args.push(TaskState[params.status]);
    }
    const where = conds.join(' AND ');
    const total = (this.db.prepare(`SELECT COUNT(*) AS n FROM a2a_tasks WHERE ${where}`).get(...args) as { n: number }).n;
    const rows = this.db.prepare(`SELECT task FROM a2a_tasks WHERE ${where} ORDER BY updated_at DESC, id LIMIT ? OFFSET ?`).all(...args, size, offset) as Array<{ task: string }>;
    const tasks = rows.map((r) => {
      const t = Task.fromJSON(JSON.parse(r.task));
      if (params.historyLength !== undefined) t.history = params.historyLength === 0 ? [] : t.history.slice(-params.historyLength);
      return t;
    });
    return { tasks, nextPageToken: offset + tasks.length < total ? String(offset + tasks.length) : '', pageSize: size, totalSize: total };
  }
}

/** The caller a task belongs to (the pipeline's caller name, carried as the SDK user's name). */
export function ownerOf(context: ServerCallContext): string {
  return context.user?.userName ?? '';
}
