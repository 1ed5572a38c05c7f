/** A hook as stored: its columns, and its definition ({match, actions}) as parsed JSON (undefined when unreadable). */
export interface StoredHook {
  id: string;
  name: string;
  position: number;
  enabled: boolean;
  definition: unknown;
  createdAt: string;
  updatedAt: string;
}

/**
 * The request hooks' storage port. `HookService` keeps the compiled hooks the request path reads in memory;
 * the port is touched by management writes and loads (boot, after a write, and `reload()` when another
 * cluster node wrote). Implemented over SQLite and PostgreSQL by `SqlHookRepository` (test/hooks/port.test.ts).
 */
export interface HookRepository {
  /** Every hook in run order: position, then creation (insertion order breaks ties). */
  loadAll(): Promise<StoredHook[]>;
  count(): Promise<number>;
  /** Refused (throws) when the name is taken. */
  insert(hook: StoredHook): Promise<void>;
  /** Writes name, position, enabled, definition and updatedAt; false when the hook is gone. */
  update(hook: StoredHook): Promise<boolean>;
  remove(id: string): Promise<boolean>;
}
