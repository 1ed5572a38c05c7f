/** One A2A task as stored: the whole task as the SDK's JSON, with the columns it is listed by. */
export interface StoredTask {
  id: string;
  contextId: string;
  /** The SDK's state name, e.g. TASK_STATE_WORKING. */
  state: string;
  /** The caller that created it (key:<id>, session, cli, loopback). */
  owner: string;
  /** The task as `Task.toJSON` gives it, as JSON text. */
  task: string;
  /** Unix ms. */
  updatedAt: number;
}

/** The state a task keeps once it is in it: a late save of a node still answering it must not undo a cancel. */
export const CANCELED_STATE = 'TASK_STATE_CANCELED';

export interface TaskListQuery {
  owner: string;
  contextId?: string;
  state?: string;
  limit: number;
  offset: number;
}

/**
 * The A2A agent's storage port (table a2a_tasks): what `tasks/get`, `tasks/list` and `tasks/cancel` read,
 * from any node in cluster mode. Implemented over SQLite and PostgreSQL by `SqlA2aTaskRepository`
 * (test/a2a/port.test.ts).
 */
export interface A2aTaskRepository {
  /**
   * Stores a task (created at `updatedAt` when new). An existing task is updated only by its owner, and a
   * canceled one stays canceled. False when nothing was written.
   */
  save(task: StoredTask): Promise<boolean>;
  load(id: string): Promise<StoredTask | undefined>;
  /** The owner's tasks, newest first, with how many match in all. */
  list(q: TaskListQuery): Promise<{ tasks: StoredTask[]; total: number }>;
  /** The stored states of these tasks (the ones that exist). */
  states(ids: readonly string[]): Promise<Map<string, string>>;
}
