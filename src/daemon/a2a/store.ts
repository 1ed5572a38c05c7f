import { type ListTasksRequest, type ListTasksResponse, Task, TaskState } from '@a2a-js/sdk';
import type { ServerCallContext, TaskStore } from '@a2a-js/sdk/server';
import type { ChangeFeed } from '../store/changes.js';
import { CANCELED_STATE, type A2aTaskRepository } from './port.js';

/** The change topic a cancel is published on: the node answering the task drops its answer. */
export const A2A_TASKS_TOPIC = 'a2a-tasks';

/**
 * A2A tasks through the A2A port (table a2a_tasks; docs/storage.md): the whole task as the SDK's JSON, with
 * its state and owner as columns. A task is visible only to the caller that created it: `load` by anyone
 * else finds nothing, which the SDK answers as "task not found". In cluster mode every node reads the same
 * tasks, and a cancel stored here is published so the node still answering the task stops.
 */
export class SqlTaskStore implements TaskStore {
  constructor(
    private readonly repo: A2aTaskRepository,
    private readonly changes: ChangeFeed,
  ) {}

  async save(task: Task, context: ServerCallContext): Promise<void> {
    const state = TaskState[task.status?.state ?? TaskState.TASK_STATE_UNSPECIFIED] ?? 'TASK_STATE_UNSPECIFIED';
    const stored = await this.repo.save({ id: task.id, contextId: task.contextId, state, owner: ownerOf(context), task: JSON.stringify(Task.toJSON(task)), updatedAt: Date.now() });
    if (stored && state === CANCELED_STATE) this.changes.publish(A2A_TASKS_TOPIC);
  }

  async load(taskId: string, context: ServerCallContext): Promise<Task | undefined> {
    const row = await this.repo.load(taskId);
    if (!row || row.owner !== ownerOf(context)) return undefined;
    return Task.fromJSON(JSON.parse(row.task));
  }

  /** The caller's tasks, newest first; filters by context and state; paged by an offset token. */
  async list(params: ListTasksRequest, context: ServerCallContext): Promise<ListTasksResponse> {
    const size = Math.min(Math.max(params.pageSize ?? 50, 1), 100);
    const offset = /^\d{1,9}$/.test(params.pageToken) ? Number(params.pageToken) : 0;
    const { tasks: rows, total } = await this.repo.list({
      owner: ownerOf(context),
      contextId: params.contextId || undefined,
      state: params.status ? TaskState[params.status] : undefined,
      limit: size,
      offset,
    });
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
