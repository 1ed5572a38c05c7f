import { randomUUID } from 'node:crypto';
import { RouterError } from '../http/errors.js';
import type { Logger } from '../logger.js';
import { LOCAL_CHANGES, type ChangeFeed } from '../store/changes.js';
import { hookInputSchema, MAX_HOOKS, type Hook, type HookAction, type HookInput, type HookPatch } from './config.js';
import type { HookRepository, StoredHook } from './port.js';

/** An enabled hook as the request stage reads it: its match and its actions, in run order. */
export interface CompiledHook {
  name: string;
  route?: string;
  model?: string;
  provider?: string;
  key?: string;
  actions: readonly HookAction[];
}

/** The change-feed topic of the hooks (docs/storage.md). */
const TOPIC = 'hooks';

/**
 * Request hooks with one owner: loaded into memory from the `HookRepository` port (SQLite or PostgreSQL),
 * written through it, and compiled (enabled ones, sorted by `order` then creation) after every change, so a
 * request reads one array. Writes publish 'hooks' on the change feed; a notice from another node reloads.
 */
export class HookService {
  private hooks: Hook[] = [];
  private compiledHooks: readonly CompiledHook[] = [];

  private constructor(
    private readonly repo: HookRepository,
    private readonly changes: ChangeFeed,
    private readonly log?: Logger,
  ) {}

  /** Loads the stored hooks; subscribes to other nodes' changes. */
  static async create(repo: HookRepository, changes: ChangeFeed = LOCAL_CHANGES, log?: Logger): Promise<HookService> {
    const service = new HookService(repo, changes, log);
    await service.reload();
    // The feed logs a failed reload (and calls again after reconnecting).
    changes.subscribe(TOPIC, () => service.reload());
    return service;
  }

  /** Replaces the snapshot with what storage holds now (boot, after a write, or another node wrote). */
  async reload(): Promise<void> {
    const rows = await this.repo.loadAll();
    const hooks: Hook[] = [];
    for (const r of rows) {
      const parsed = hookInputSchema.safeParse({ ...(r.definition as object), name: r.name, order: r.position, enabled: r.enabled });
      if (!parsed.success) {
        this.log?.warn('stored hook no longer validates; skipped', { hook: r.name });
        continue;
      }
      hooks.push({ ...parsed.data, id: r.id, createdAt: r.createdAt, updatedAt: r.updatedAt });
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

  async create(input: HookInput): Promise<Hook> {
    if ((await this.repo.count()) >= MAX_HOOKS) throw new RouterError(400, `At most ${MAX_HOOKS} hooks; delete one first.`, { code: 'hook_limit' });
    this.nameFree(input.name);
    const now = new Date().toISOString();
    const id = randomUUID();
    await this.written(() => this.repo.insert({ ...stored(input), id, createdAt: now, updatedAt: now }), input.name, id);
    return this.orThrow(id);
  }

  async replace(idOrName: string, input: HookInput): Promise<Hook> {
    const cur = this.orThrow(idOrName);
    this.nameFree(input.name, cur.id);
    await this.written(() => this.repo.update({ ...stored(input), id: cur.id, createdAt: cur.createdAt, updatedAt: new Date().toISOString() }), input.name, cur.id);
    return this.orThrow(cur.id);
  }

  patch(idOrName: string, patch: HookPatch): Promise<Hook> {
    const cur = this.orThrow(idOrName);
    const { id: _id, createdAt: _c, updatedAt: _u, ...base } = cur;
    const next = hookInputSchema.safeParse({ ...base, ...patch });
    if (!next.success) throw new RouterError(400, next.error.issues.map((i) => `${i.path.join('.') || 'hook'}: ${i.message}`).join('; '));
    return this.replace(cur.id, next.data);
  }

  async delete(idOrName: string): Promise<void> {
    const cur = this.orThrow(idOrName);
    await this.repo.remove(cur.id);
    await this.reload();
    this.changes.publish(TOPIC);
  }

  /**
   * Runs a write, then reloads and tells the other nodes. A write refused because another node took the
   * name meanwhile (the UNIQUE column) answers 409 like a name taken here.
   */
  private async written(write: () => Promise<unknown>, name: string, id: string): Promise<void> {
    try {
      await write();
    } catch (err) {
      await this.reload();
      this.nameFree(name, id);
      throw err;
    }
    await this.reload();
    this.changes.publish(TOPIC);
  }
}

/** The stored columns of a hook's input. */
function stored(input: HookInput): Omit<StoredHook, 'id' | 'createdAt' | 'updatedAt'> {
  return { name: input.name, position: input.order, enabled: input.enabled, definition: { match: input.match, actions: input.actions } };
}
