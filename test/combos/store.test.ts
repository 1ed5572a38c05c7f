/**
 * ComboStore (SQLite + in-memory cache, change listeners) and the graph helpers expandCombo and
 * comboContextLength, on a real migrated database and a stub provider directory.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { SqlComboRepository } from '../../src/daemon/combos/sql-repository.js';
import { ComboStore, type ComboChange, type ComboInput } from '../../src/daemon/combos/store.js';
import { comboContextLength, expandCombo } from '../../src/daemon/combos/validate.js';
import { RouterError } from '../../src/daemon/http/errors.js';
import type { ModelInfo, ProviderDef } from '../../src/daemon/providers/types.js';
import { closeDatabase, openDatabase, type Db } from '../../src/daemon/store/db.js';
import { migrate } from '../../src/daemon/store/migrate.js';
import { SqliteDriver } from '../../src/daemon/store/sqlite-driver.js';

const cleanup: Array<() => void> = [];
afterEach(() => {
  while (cleanup.length) cleanup.pop()!();
});

function freshDb(): { db: Db; file: string } {
  const dir = mkdtempSync(join(tmpdir(), 'router-combos-'));
  const file = join(dir, 'router.db');
  const db = openDatabase(file);
  migrate(db);
  cleanup.push(() => rmSync(dir, { recursive: true, force: true }));
  cleanup.push(() => closeDatabase(db));
  return { db, file };
}

const comboStore = (db: Db, onError?: (e: unknown) => void) => ComboStore.create(new SqlComboRepository(new SqliteDriver(db)), onError);

const input = (name: string, models: Array<string | { model: string; weight?: number }>, extra: Partial<ComboInput> = {}): ComboInput => ({
  name,
  strategy: 'priority',
  models: models.map((m) => (typeof m === 'string' ? { model: m } : m)),
  targetTimeoutMs: null,
  affinity: 'off',
  hedgeAfterMs: null,
  midStreamRecovery: null,
  contextFit: false,
  ...extra,
});

describe('ComboStore', () => {
  it('creates, reads by id and name, lists oldest first, and persists across a reload', async () => {
    const { db, file } = freshDb();
    const store = await comboStore(db);
    const a = await store.create(input('a', ['openai/gpt-5', { model: 'anthropic/claude-sonnet-4-5', weight: 2 }], { strategy: 'weighted', targetTimeoutMs: 5000 }));
    const b = await store.create(input('b', ['a']));
    expect(a).toMatchObject({ name: 'a', strategy: 'weighted', targetTimeoutMs: 5000 });
    expect(a.models).toEqual([{ model: 'openai/gpt-5' }, { model: 'anthropic/claude-sonnet-4-5', weight: 2 }]);
    expect(a.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(a.createdAt).toBe(a.updatedAt);
    expect(store.get(a.id)).toBe(a);
    expect(store.byName('b')).toBe(b);
    expect(store.list().map((c) => c.name)).toEqual(['a', 'b']);
    expect(store.referrers('a').map((c) => c.name)).toEqual(['b']);

    const db2 = openDatabase(file);
    cleanup.push(() => closeDatabase(db2));
    const reopened = await comboStore(db2);
    expect(reopened.list()).toEqual([a, b]);
  });

  it('serves reads from memory: no database access after load', async () => {
    const { db } = freshDb();
    const store = await comboStore(db);
    const a = await store.create(input('a', ['openai/gpt-5']));
    const prepare = db.prepare.bind(db);
    let calls = 0;
    (db as unknown as { prepare: typeof db.prepare }).prepare = ((sql: string) => {
      calls++;
      return prepare(sql);
    }) as typeof db.prepare;
    for (let i = 0; i < 100; i++) {
      store.byName('a');
      store.get(a.id);
      store.list();
    }
    expect(calls).toBe(0);
  });

  it('returns frozen records; update replaces the record and re-keys a renamed combo', async () => {
    const { db } = freshDb();
    const store = await comboStore(db);
    const a = await store.create(input('a', ['openai/gpt-5']));
    expect(Object.isFrozen(a)).toBe(true);
    expect(Object.isFrozen(a.models)).toBe(true);
    await new Promise((r) => setTimeout(r, 5));
    const next = (await store.update(a.id, input('renamed', ['openai/gpt-4.1'], { strategy: 'random' })))!;
    expect(next).not.toBe(a);
    expect(a.name).toBe('a');
    expect(next).toMatchObject({ id: a.id, name: 'renamed', strategy: 'random', createdAt: a.createdAt });
    expect(next.updatedAt > a.updatedAt).toBe(true);
    expect(store.byName('a')).toBeUndefined();
    expect(store.byName('renamed')).toBe(next);
    expect(await store.update('00000000-0000-4000-8000-000000000000', input('x', ['openai/gpt-5']))).toBeUndefined();
  });

  it('a duplicate name is a 409 from the store too (the unique index is the safety net)', async () => {
    const { db } = freshDb();
    const store = await comboStore(db);
    await store.create(input('a', ['openai/gpt-5']));
    const b = await store.create(input('b', ['openai/gpt-5']));
    await expect(store.create(input('a', ['openai/gpt-5']))).rejects.toMatchObject({ status: 409, code: 'combo_name_taken' });
    await expect(store.update(b.id, input('a', ['openai/gpt-5']))).rejects.toBeInstanceOf(RouterError);
    await expect(store.update(b.id, input('a', ['openai/gpt-5']))).rejects.toMatchObject({ status: 409 });
    expect(store.byName('b')).toBe(b);
  });

  it('removes, and tells onChange listeners about every write; a failing listener is reported, not thrown', async () => {
    const { db } = freshDb();
    const errors: unknown[] = [];
    const store = await comboStore(db, (e) => errors.push(e));
    const seen: ComboChange[] = [];
    const off = store.onChange((c) => seen.push(c));
    store.onChange(() => {
      throw new Error('listener bug');
    });
    const a = await store.create(input('a', ['openai/gpt-5']));
    const a2 = (await store.update(a.id, input('a', ['openai/gpt-4.1'])))!;
    expect(await store.remove(a.id)).toBe(true);
    expect(await store.remove(a.id)).toBe(false);
    expect(seen).toEqual([
      { type: 'created', combo: a },
      { type: 'updated', combo: a2, previous: a },
      { type: 'removed', combo: a2 },
    ]);
    expect(errors).toHaveLength(3);
    off();
    await store.create(input('b', ['openai/gpt-5']));
    expect(seen).toHaveLength(3);
    expect(store.get(a.id)).toBeUndefined();
    expect(store.list().map((c) => c.name)).toEqual(['b']);
  });
});

describe('expandCombo', () => {
  it('flattens nested combos depth first in declared order, with weights and the path of combos', async () => {
    const { db } = freshDb();
    const store = await comboStore(db);
    await store.create(input('inner', [{ model: 'openai/gpt-5', weight: 3 }, 'anthropic/claude-sonnet-4-5']));
    await store.create(input('outer', ['gemini/gemini-2.5-pro', 'inner', 'nowhere/model']));
    expect(expandCombo('outer', store)).toEqual([
      { model: 'gemini/gemini-2.5-pro', via: ['outer'] },
      { model: 'openai/gpt-5', weight: 3, via: ['outer', 'inner'] },
      { model: 'anthropic/claude-sonnet-4-5', via: ['outer', 'inner'] },
      { model: 'nowhere/model', via: ['outer'] },
    ]);
    expect(expandCombo('openai/gpt-5', store)).toBeUndefined();
    expect(expandCombo(store.byName('inner')!, store)).toHaveLength(2);
  });

  it('is tolerant: stops at maxDepth and skips references back into its own path', async () => {
    const { db } = freshDb();
    const store = await comboStore(db);
    await store.create(input('c1', ['openai/gpt-5']));
    await store.create(input('c2', ['c1', 'openai/gpt-4.1']));
    await store.create(input('c3', ['c2']));
    expect(expandCombo('c3', store)!.map((l) => l.model)).toEqual(['openai/gpt-5', 'openai/gpt-4.1']);
    expect(expandCombo('c3', store, 2)!.map((l) => l.model)).toEqual(['openai/gpt-4.1']);
    expect(expandCombo('c3', store, 1)).toEqual([]);
    // A cycle can only exist if the store is written around validation; expansion still terminates.
    const loopA = await store.create(input('loop-a', ['openai/gpt-5']));
    await store.create(input('loop-b', ['loop-a', 'anthropic/claude-haiku-4-5']));
    await store.update(loopA.id, input('loop-a', ['loop-b', 'openai/gpt-5']));
    expect(expandCombo('loop-a', store)!.map((l) => l.model)).toEqual(['anthropic/claude-haiku-4-5', 'openai/gpt-5']);
  });
});

describe('comboContextLength', () => {
  const def = (id: string, models: ModelInfo[]) => ({ id, models }) as unknown as ProviderDef;
  const defs = new Map([
    ['big', def('big', [{ id: 'm1', contextLength: 1_000_000 }, { id: 'nolen' }])],
    ['small', def('small', [{ id: 'm2', contextLength: 32_000 }])],
  ]);
  const providers = {
    split(model: string) {
      const slash = model.indexOf('/');
      const d = slash > 0 ? defs.get(model.slice(0, slash)) : undefined;
      return d ? { def: d, model: model.slice(slash + 1) } : undefined;
    },
    models: (d: ProviderDef) => d.models,
  };

  it('is the minimum over known leaf targets (nested included), ignoring unknown ones; undefined when none is known', async () => {
    const { db } = freshDb();
    const combos = await comboStore(db);
    const services = { providers, combos };
    await combos.create(input('only-big', ['big/m1', 'big/unknown-model', 'ghost/m2', 'big/nolen']));
    await combos.create(input('mixed', ['only-big', 'small/m2']));
    await combos.create(input('unknown', ['ghost/x', 'big/not-listed', 'big/nolen']));
    expect(comboContextLength('only-big', services)).toBe(1_000_000);
    expect(comboContextLength(combos.byName('mixed')!, services)).toBe(32_000);
    expect(comboContextLength('unknown', services)).toBeUndefined();
    expect(comboContextLength('no-such-combo', services)).toBeUndefined();
  });
});
