import { randomUUID } from 'node:crypto';
import { RouterError } from '../http/errors.js';
import type { ComboStrategy } from '../routing/strategies.js';
import type { Db } from '../store/db.js';

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

interface Row {
  id: string;
  name: string;
  strategy: string;
  models: string;
  target_timeout_ms: number | null;
  affinity: string;
  hedge_after_ms: number | null;
  mid_stream_recovery: string | null;
  context_fit: number;
  created_at: string;
  updated_at: string;
}

function freeze(rec: ComboRecord): ComboRecord {
  for (const m of rec.models) Object.freeze(m);
  Object.freeze(rec.models);
  return Object.freeze(rec);
}

function normalizeModels(models: readonly ComboModel[]): ComboModel[] {
  return models.map((m) => (m.weight === undefined ? { model: m.model } : { model: m.model, weight: m.weight }));
}

function fromRow(row: Row): ComboRecord {
  return freeze({
    id: row.id,
    name: row.name,
    strategy: row.strategy as ComboStrategy,
    models: normalizeModels(JSON.parse(row.models) as ComboModel[]),
    targetTimeoutMs: row.target_timeout_ms,
    affinity: row.affinity as ComboAffinity,
    hedgeAfterMs: row.hedge_after_ms,
    midStreamRecovery: row.mid_stream_recovery as MidStreamRecovery | null,
    contextFit: row.context_fit === 1,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  });
}

function isUniqueViolation(err: unknown): boolean {
  return (err as { code?: string }).code === 'SQLITE_CONSTRAINT_UNIQUE';
}

/**
 * Combos, loaded once and cached in memory by id and by name: the proxy resolves a combo name with one map
 * lookup and never touches the database per request. Writes go to SQLite first, then to the cache, then to
 * `onChange` listeners (synchronously, in registration order).
 */
export class ComboStore implements ComboLookup {
  private readonly byIdMap = new Map<string, ComboRecord>();
  private readonly byNameMap = new Map<string, ComboRecord>();
  private readonly listeners = new Set<(change: ComboChange) => void>();
  private sorted: readonly ComboRecord[] | undefined;

  constructor(
    private readonly db: Db,
    private readonly onListenerError: (error: unknown) => void = () => {},
  ) {
    for (const row of db.prepare('SELECT * FROM combos').all() as Row[]) this.cache(fromRow(row));
  }

  private cache(rec: ComboRecord): void {
    this.byIdMap.set(rec.id, rec);
    this.byNameMap.set(rec.name, rec);
    this.sorted = undefined;
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
  create(input: ComboInput): ComboRecord {
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
    try {
      this.db
        .prepare(
          'INSERT INTO combos (id, name, strategy, models, target_timeout_ms, affinity, hedge_after_ms, mid_stream_recovery, context_fit, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
        )
        .run(rec.id, rec.name, rec.strategy, JSON.stringify(rec.models), rec.targetTimeoutMs, rec.affinity, rec.hedgeAfterMs, rec.midStreamRecovery, rec.contextFit ? 1 : 0, now, now);
    } catch (err) {
      if (isUniqueViolation(err)) throw nameTaken(rec.name);
      throw err;
    }
    this.cache(rec);
    this.emit({ type: 'created', combo: rec });
    return rec;
  }

  /** Replaces every field of a combo (PUT semantics); undefined when the id is unknown. */
  update(id: string, input: ComboInput): ComboRecord | undefined {
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
    try {
      this.db
        .prepare(
          'UPDATE combos SET name = ?, strategy = ?, models = ?, target_timeout_ms = ?, affinity = ?, hedge_after_ms = ?, mid_stream_recovery = ?, context_fit = ?, updated_at = ? WHERE id = ?',
        )
        .run(rec.name, rec.strategy, JSON.stringify(rec.models), rec.targetTimeoutMs, rec.affinity, rec.hedgeAfterMs, rec.midStreamRecovery, rec.contextFit ? 1 : 0, rec.updatedAt, id);
    } catch (err) {
      if (isUniqueViolation(err)) throw nameTaken(rec.name);
      throw err;
    }
    if (previous.name !== rec.name) this.byNameMap.delete(previous.name);
    this.cache(rec);
    this.emit({ type: 'updated', combo: rec, previous });
    return rec;
  }

  remove(id: string): boolean {
    const rec = this.byIdMap.get(id);
    if (!rec) return false;
    this.db.prepare('DELETE FROM combos WHERE id = ?').run(id);
    this.byIdMap.delete(id);
    this.byNameMap.delete(rec.name);
    this.sorted = undefined;
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
