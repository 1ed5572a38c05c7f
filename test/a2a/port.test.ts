/**
 * The A2A task port on both adapters (migrated temp SQLite, real PostgreSQL 15), and the SDK task store over
 * it: a task saved on one node is loaded and listed on another (by its owner only); an update by another
 * caller is refused; a canceled task stays canceled whatever a node still answering it saves later, and the
 * cancel is published so that node hears it.
 */
import { Role, Task, TaskState } from '@a2a-js/sdk';
import { ServerCallContext } from '@a2a-js/sdk/server';
import { describe, expect, it } from 'vitest';
import { SqlA2aTaskRepository } from '../../src/daemon/a2a/sql-repository.js';
import { A2A_TASKS_TOPIC, SqlTaskStore } from '../../src/daemon/a2a/store.js';
import { LOCAL_CHANGES } from '../../src/daemon/store/changes.js';
import { linkedFeeds } from '../support/port-fixtures.js';
import { adapterTitle, storageAdapters } from '../support/storage.js';

const as = (userName: string) => new ServerCallContext({ user: { isAuthenticated: true, userName } });

function task(id: string, state: TaskState, text = 'hello ünï', contextId = 'ctx-1'): Task {
  return {
    id,
    contextId,
    status: { state, message: undefined, timestamp: '2026-05-06T07:08:09.000Z' },
    artifacts: [],
    history: [
      { messageId: `${id}-m1`, contextId, taskId: id, role: Role.ROLE_USER, parts: [{ content: { $case: 'text', value: text }, metadata: undefined, filename: '', mediaType: 'text/plain' }], metadata: undefined, extensions: [], referenceTaskIds: [] },
      { messageId: `${id}-m2`, contextId, taskId: id, role: Role.ROLE_AGENT, parts: [{ content: { $case: 'text', value: 'reply' }, metadata: undefined, filename: '', mediaType: 'text/plain' }], metadata: undefined, extensions: [], referenceTaskIds: [] },
    ],
    metadata: undefined,
  };
}

const listReq = (over: Record<string, unknown> = {}) => ({ tenant: '', contextId: '', status: TaskState.TASK_STATE_UNSPECIFIED, pageSize: 50, pageToken: '', historyLength: undefined, statusTimestampAfter: undefined, includeArtifacts: false, ...over }) as never;

for (const adapter of storageAdapters()) {
  describe.skipIf(adapter.unavailable)(adapterTitle('A2aTaskRepository', adapter), () => {
    const open = async () => {
      const storage = await adapter.open();
      const feeds = linkedFeeds(2);
      const repoA = new SqlA2aTaskRepository(storage.driver);
      const repoB = new SqlA2aTaskRepository(await storage.connect());
      return { repoA, repoB, a: new SqlTaskStore(repoA, feeds[0]!), b: new SqlTaskStore(repoB, feeds[1]!), feeds };
    };

    it('a task saved on node A is loaded and listed on node B, by its owner only, field for field', async () => {
      const { a, b } = await open();
      const t = task('t-1', TaskState.TASK_STATE_WORKING);
      await a.save(t, as('key:k1'));
      expect(Task.toJSON((await b.load('t-1', as('key:k1')))!)).toEqual(Task.toJSON(t));
      expect(await b.load('t-1', as('key:k2'))).toBeUndefined();
      expect(await b.load('nope', as('key:k1'))).toBeUndefined();
      await a.save(task('t-1', TaskState.TASK_STATE_COMPLETED), as('key:k1'));
      expect((await b.load('t-1', as('key:k1')))?.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
      // Another caller's save of the same id changes nothing.
      await b.save(task('t-1', TaskState.TASK_STATE_FAILED, 'hijack'), as('key:k2'));
      expect((await a.load('t-1', as('key:k1')))?.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
      expect(await a.load('t-1', as('key:k2'))).toBeUndefined();
    });

    it('lists newest first, filtered by context and state, paged by offset; history cut on request', async () => {
      const { a, b } = await open();
      for (let i = 0; i < 5; i++) {
        await a.save(task(`l-${i}`, i % 2 ? TaskState.TASK_STATE_COMPLETED : TaskState.TASK_STATE_WORKING, `m${i}`, i < 3 ? 'ctx-a' : 'ctx-b'), as('key:k1'));
        await new Promise((r) => setTimeout(r, 3)); // distinct update times
      }
      await a.save(task('other', TaskState.TASK_STATE_WORKING), as('key:k2'));
      const all = await b.list(listReq(), as('key:k1'));
      expect(all.tasks.map((t) => t.id)).toEqual(['l-4', 'l-3', 'l-2', 'l-1', 'l-0']);
      expect(all.totalSize).toBe(5);
      const page = await b.list(listReq({ pageSize: 2, pageToken: '2' }), as('key:k1'));
      expect(page.tasks.map((t) => t.id)).toEqual(['l-2', 'l-1']);
      expect(page.nextPageToken).toBe('4');
      expect((await b.list(listReq({ contextId: 'ctx-b' }), as('key:k1'))).tasks.map((t) => t.id)).toEqual(['l-4', 'l-3']);
      expect((await b.list(listReq({ status: TaskState.TASK_STATE_COMPLETED }), as('key:k1'))).tasks.map((t) => t.id)).toEqual(['l-3', 'l-1']);
      expect((await b.list(listReq({ historyLength: 1 }), as('key:k1'))).tasks[0]?.history.map((m) => m.messageId)).toEqual(['l-4-m2']);
    });

    it('a cancel stored on B stays: the late answer A saves is dropped; the cancel is published, A hears it', async () => {
      const { a, b, repoA, feeds } = await open();
      const heard: string[] = [];
      feeds[0]!.subscribe(A2A_TASKS_TOPIC, () => void heard.push('a'));
      await a.save(task('c-1', TaskState.TASK_STATE_WORKING), as('key:k1'));
      expect(heard).toEqual([]);
      await b.save(task('c-1', TaskState.TASK_STATE_CANCELED), as('key:k1'));
      await new Promise((r) => setTimeout(r, 10));
      expect(heard).toEqual(['a']);
      expect(await repoA.states(['c-1', 'missing'])).toEqual(new Map([['c-1', 'TASK_STATE_CANCELED']]));
      await a.save(task('c-1', TaskState.TASK_STATE_COMPLETED, 'late answer'), as('key:k1'));
      expect((await a.load('c-1', as('key:k1')))?.status?.state).toBe(TaskState.TASK_STATE_CANCELED);
    });

    it('one machine: the local feed, tasks kept across a new store over the same database (a restart)', async () => {
      const { repoA } = await open();
      await new SqlTaskStore(repoA, LOCAL_CHANGES).save(task('r-1', TaskState.TASK_STATE_COMPLETED), as('cli'));
      expect((await new SqlTaskStore(repoA, LOCAL_CHANGES).load('r-1', as('cli')))?.history).toHaveLength(2);
    });
  });
}
