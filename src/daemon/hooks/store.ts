import { randomUUID } from 'node:crypto';
import { RouterError } from '../http/errors.js';
import type { Logger } from '../logger.js';
import type { Db } from '../store/db.js';
import { hookInputSchema, MAX_HOOKS, type Hook, type HookAction, type HookInput, type HookPatch } from './config.js';

interface Row {
  id: string;
  name: string;
  position: number;
  enabled: number;
  definition: string;
  created_at: string;
  updated_at: string;
}

/** An enabled hook as the request stage reads it: its match and its actions, in run order. */
export interface CompiledHook {
  name: string;
  route?: string;
  model?: string;
  provider?: string;
  key?: string;
  actions: readonly HookAction[];
}

/**
 * Request hooks with one owner: read once into memory, written through to the database, and compiled
 * (enabled ones, sorted by `order` then creation) after every change, so a request reads one array.
 */
export class HookService {
  private hooks: Hook[] = [];
  private compiledHooks: readonly CompiledHook[] = [];

  constructor(
    private readonly db: Db,
    private readonly log?: Logger,
  ) {
    this.load();
  }

  private load(): void {
    const rows = this.db.prepare('SELECT * FROM middleware_hooks ORDER BY position, created_at, rowid').all() as Row[];
    const hooks: Hook[] = [];
    for (const r of rows) {
      let def: unknown;
      try {
        def = JSON.parse(r.definition);
      } catch {
        def = undefined;
      }
      const parsed = hookInputSchema.safeParse({ ...(def as object), name: r.name, order: r.position, enabled: r.enabled === 1 });
      if (!parsed.success) {
        this.log?.warn('stored hook no longer validates; skipped', { hook: r.name });
        continue;
      }
      hooks.push({ ...parsed.data, id: r.id, createdAt: r.created_at, updatedAt: r.updated_at });
    }
    this.hooks = hooks;
    this.compiledHooks = hooks
      .filter((h) => h.enabled)
      .map((h) => ({ name: h.name, ...h.match, actions: h.actions }));
  }

  /** The enabled hooks in run order (empty: the stage wants no request). */
  compiled(): readonly CompiledHook[] {
    return this.compiledHooks;
  }

  list(): Hook[] {
    return this.hooks;
  }

  get(idOrName: string): Hook | undefined {
    return this.hooks.find((h) => h.id === idOrName || h.name === idOrName);
  }

  /** A hook by id or name; 404 when there is none. */
  orThrow(idOrName: string): Hook {
    const h = this.get(idOrName);
    if (!h) throw new RouterError(404, `Hook '${idOrName}' not found.`);
    return h;
  }

  private nameFree(name: string, except?: string): void {
    if (this.hooks.some((h) => h.name === name && h.id !== except)) throw new RouterError(409, `A hook named '${name}' exists already.`);
  }

  create(input: HookInput): Hook {
    const count = (this.db.prepare('SELECT COUNT(*) AS n FROM middleware_hooks').get() as { n: number }).n;
    if (count >= MAX_HOOKS) throw new RouterError(400, `At most ${MAX_HOOKS} hooks; delete one first.`, { code: 'hook_limit' });
    this.nameFree(input.name);
    const now = new Date().toISOString();
    const id = randomUUID();
    this.db
      .prepare('INSERT INTO middleware_hooks (id, name, position, enabled, definition, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)')
      .run(id, input.name, input.order, input.enabled ? 1 : 0, JSON.stringify({ match: input.match, actions: input.actions }), now, now);
    this.load();
    return this.orThrow(id);
  }

  replace(idOrName: string, input: HookInput): Hook {
    const cur = this.orThrow(idOrName);
    this.nameFree(input.name, cur.id);
    this.db
      .prepare('UPDATE middleware_hooks SET name = ?, position = ?, enabled = ?, definition = ?, updated_at = ? WHERE id = ?')
      .run(input.name, input.order, input.enabled ? 1 : 0, JSON.stringify({ match: input.match, actions: input.actions }), new Date().toISOString(), cur.id);
    this.load();
    return this.orThrow(cur.id);
  }

  patch(idOrName: string, patch: HookPatch): Hook {
    const cur = this.orThrow(idOrName);
    const { id: _id, createdAt: _c, updatedAt: _u, ...base } = cur;
    const next = hookInputSchema.safeParse({ ...base, ...patch });
    if (!next.success) throw new RouterError(400, next.error.issues.map((i) => `${i.path.join('.') || 'hook'}: ${i.message}`).join('; '));
    return this.replace(cur.id, next.data);
  }

  delete(idOrName: string): void {
    const cur = this.orThrow(idOrName);
    this.db.prepare('DELETE FROM middleware_hooks WHERE id = ?').run(cur.id);
    this.load();
  }
}
