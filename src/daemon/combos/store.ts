import { randomUUID } from 'node:crypto';
import { RouterError } from '../http/errors.js';
import type { ComboStrategy } from '../routing/strategies.js';
import { LOCAL_CHANGES, type ChangeFeed } from '../store/changes.js';
import type { ComboRepository } from './port.js';

import type { ComboAffinity, ComboModel, ComboRecord, MidStreamRecovery } from '../../shared/records.js';

export type { ComboModel, ComboRecord };

/** What create and update store (already validated by `validateCombo`). */
export interface ComboInput {
  name: string;
  strategy: ComboStrategy;
  models: ComboModel[];
  targetTimeoutMs: number | null;
  affinity: ComboAffinity;
  hedgeAfterMs: number | null;
  midStreamRecovery: MidStreamRecovery | null;
  contextFit: boolean;
}

export type ComboChange =
  | { type: 'created'; combo: ComboRecord }
  | { type: 'updated'; combo: ComboRecord; previous: ComboRecord }
  | { type: 'removed'; combo: ComboRecord };

/** The read side of the store, enough for graph walks (`expandCombo`) over real or proposed state. */
export interface ComboLookup {
  byName(name: string): ComboRecord | undefined;
  list(): readonly ComboRecord[];
}

function freeze(rec: ComboRecord): ComboRecord {
  for (const m of rec.models) Object.freeze(m);
  Object.freeze(rec.models);
  return Object.freeze(rec);
}

function normalizeModels(models: readonly ComboModel[]): ComboModel[] {
  return models.map((m) => (m.weight === undefined ? { model: m.model } : { model: m.model, weight: m.weight }));
}

/** The change-feed topic of combo writes. */
export const COMBOS_TOPIC = 'combos';

/**
 * Combos, loaded once and cached in memory by id and by name: the proxy resolves a combo name with one map
 * lookup and never touches storage per request. Writes go to the `ComboRepository` port (SQLite, or
 * PostgreSQL in cluster mode) first, then to the cache, then to `onChange` listeners (synchronously, in
 * registration order); `reload()` (another node wrote) tells listeners each change the same way.
 */
export class ComboStore implements ComboLookup {
  private byIdMap = new Map<string, ComboRecord>();
  private byNameMap = new Map<string, ComboRecord>();
  private readonly listeners = new Set<(change: ComboChange) => void>();
  private sorted: readonly ComboRecord[] | undefined;

  /** `initial`: the combos as stored (`repo.loadAll()`); `create` loads them itself. */
  constructor(
    private readonly repo: ComboRepository,
    initial: readonly ComboRecord[],
    private readonly onListenerError: (error: unknown) => void = () => {},
    private readonly changes: ChangeFeed = LOCAL_CHANGES,
  ) {
    for (const rec of initial) this.cache(freeze({ ...rec, models: normalizeModels(rec.models) }));
    // The reload's promise is returned for feeds that wait for their subscribers (tests); it never rejects.
    this.changes.subscribe(COMBOS_TOPIC, () => this.reload().catch((err: unknown) => this.onListenerError(err)));
  }

  static async create(repo: ComboRepository, onListenerError?: (error: unknown) => void, changes?: ChangeFeed): Promise<ComboStore> {
    return new ComboStore(repo, await repo.loadAll(), onListenerError, changes);
  }

  private cache(rec: ComboRecord): void {
    this.byIdMap.set(rec.id, rec);
    this.byNameMap.set(rec.name, rec);
    this.sorted = undefined;
  }

  /**
   * Replaces the snapshot with what storage holds now and tells listeners what differs: created, updated
   * (any field) or removed combos, as local writes would.
   */
  async reload(): Promise<void> {
    const rows = (await this.repo.loadAll()).map((rec) => freeze({ ...rec, models: normalizeModels(rec.models) }));
    const previous = this.byIdMap;
    const byId = new Map<string, ComboRecord>();
    const byName = new Map<string, ComboRecord>();
    for (const rec of rows) {
      byId.set(rec.id, rec);
      byName.set(rec.name, rec);
    }
    this.byIdMap = byId;
    this.byNameMap = byName;
    this.sorted = undefined;
    for (const rec of rows) {
      const old = previous.get(rec.id);
      if (!old) this.emit({ type: 'created', combo: rec });
      else if (JSON.stringify(old) !== JSON.stringify(rec)) this.emit({ type: 'updated', combo: rec, previous: old });
    }
    for (const old of previous.values()) if (!byId.has(old.id)) this.emit({ type: 'removed', combo: old });
  }

  get(id: string): ComboRecord | undefined {
    return this.byIdMap.get(id);
  }

  byName(name: string): ComboRecord | undefined {
    return this.byNameMap.get(name);
  }

  /** Every combo, oldest first (ties by name). The array is cached until the next write. */
  list(): readonly ComboRecord[] {
    this.sorted ??= Object.freeze(
      [...this.byIdMap.values()].sort((a, b) => a.createdAt.localeCompare(b.createdAt) || a.name.localeCompare(b.name)),
    );
    return this.sorted;
  }

  /** Combos that list `name` among their models (direct references only). */
  referrers(name: string): ComboRecord[] {
    return this.list().filter((c) => c.models.some((m) => m.model === name));
  }

  /** Stores a validated combo. A taken name is a 409 (validation checks first; this is the safety net). */
  async create(input: ComboInput): Promise<ComboRecord> {
    const now = new Date().toISOString();
    const rec = freeze({
      id: randomUUID(),
      name: input.name,
      strategy: input.strategy,
      models: normalizeModels(input.models),
      targetTimeoutMs: input.targetTimeoutMs,
      affinity: input.affinity,
      hedgeAfterMs: input.hedgeAfterMs,
      midStreamRecovery: input.midStreamRecovery,
      contextFit: input.contextFit,
      createdAt: now,
      updatedAt: now,
    });
    if ((await this.repo.insert(rec)) === 'name-taken') throw nameTaken(rec.name);
    this.cache(rec);
    this.changes.publish(COMBOS_TOPIC);
    this.emit({ type: 'created', combo: rec });
    return rec;
  }

  /** Replaces every field of a combo (PUT semantics); undefined when the id is unknown. */
  async update(id: string, input: ComboInput): Promise<ComboRecord | undefined> {
    const previous = this.byIdMap.get(id);
    if (!previous) return undefined;
    const rec = freeze({
      ...previous,
      name: input.name,
      strategy: input.strategy,
      models: normalizeModels(input.models),
      targetTimeoutMs: input.targetTimeoutMs,
      affinity: input.affinity,
      hedgeAfterMs: input.hedgeAfterMs,
      midStreamRecovery: input.midStreamRecovery,
      contextFit: input.contextFit,
      updatedAt: new Date().toISOString(),
    });
    const result = await this.repo.update(rec);
    if (result === 'name-taken') throw nameTaken(rec.name);
    if (result === 'missing') return undefined;
    // The snapshot may have moved while the write was in flight (a reload): take the record as it is now.
    const current = this.byIdMap.get(id) ?? previous;
    if (current.name !== rec.name) this.byNameMap.delete(current.name);
    this.cache(rec);
    this.changes.publish(COMBOS_TOPIC);
    this.emit({ type: 'updated', combo: rec, previous: current });
    return rec;
  }

  async remove(id: string): Promise<boolean> {
    const rec = this.byIdMap.get(id);
    if (!rec) return false;
    await this.repo.remove(id);
    this.byIdMap.delete(id);
    this.byNameMap.delete(rec.name);
    this.sorted = undefined;
    this.changes.publish(COMBOS_TOPIC);
    this.emit({ type: 'removed', combo: rec });
    return true;
  }

  /** Calls `fn` after every successful write. Returns the unsubscribe function. */
  onChange(fn: (change: ComboChange) => void): () => void {
    this.listeners.add(fn);
    return () => {
      this.listeners.delete(fn);
    };
  }

  private emit(change: ComboChange): void {
    for (const fn of this.listeners) {
      try {
        fn(change);
      } catch (err) {
        this.onListenerError(err);
      }
    }
  }
}

export function nameTaken(name: string): RouterError {
  return new RouterError(409, `A combo named '${name}' already exists.`, { code: 'combo_name_taken', extra: { param: 'name' } });
}
