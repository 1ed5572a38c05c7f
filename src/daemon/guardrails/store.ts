import { LOCAL_CHANGES, type ChangeFeed } from '../store/changes.js';
import { guardrailConfigSchema, guardrailOverrideSchema, mergeConfig, type GuardrailConfig, type GuardrailOverride } from './config.js';
import { GuardrailPolicy } from './policy.js';
import type { GuardrailRepository } from './port.js';

/** The change-feed topic of the guardrails (docs/storage.md). */
const TOPIC = 'guardrails';

/**
 * Guardrail configuration with one owner: the global document and per-key overrides, loaded into memory
 * from the `GuardrailRepository` port (SQLite or PostgreSQL) and written through it first, the snapshot
 * changing only once stored. Compiled policies are cached (one for the global config, one per key with an
 * override) and rebuilt only after a change, so a request costs one map lookup. Writes publish
 * 'guardrails' on the change feed; a notice from another node reloads.
 */
export class GuardrailService {
  private config: GuardrailConfig = guardrailConfigSchema.parse({});
  private overrides = new Map<string, GuardrailOverride>();
  private global!: GuardrailPolicy;
  private readonly perKey = new Map<string, GuardrailPolicy>();

  private constructor(
    private readonly repo: GuardrailRepository,
    private readonly changes: ChangeFeed,
  ) {}

  /** Loads the stored configuration; subscribes to other nodes' changes. */
  static async create(repo: GuardrailRepository, changes: ChangeFeed = LOCAL_CHANGES): Promise<GuardrailService> {
    const service = new GuardrailService(repo, changes);
    await service.reload();
    // The feed logs a failed reload (and calls again after reconnecting).
    changes.subscribe(TOPIC, () => service.reload());
    return service;
  }

  /** Replaces the snapshot with what storage holds now (boot, or another node wrote). */
  async reload(): Promise<void> {
    const stored = await this.repo.load();
    // A stored document that no longer validates (older bounds) falls back to the defaults rather than failing start.
    const parsed = stored.config !== undefined ? guardrailConfigSchema.safeParse(stored.config) : undefined;
    const overrides = new Map<string, GuardrailOverride>();
    for (const r of stored.overrides) {
      const o = guardrailOverrideSchema.safeParse(r.config);
      if (o.success) overrides.set(r.keyId, o.data);
    }
    this.config = parsed?.success ? parsed.data : guardrailConfigSchema.parse({});
    this.overrides = overrides;
    this.rebuild();
  }

  private rebuild(): void {
    this.global = new GuardrailPolicy(this.config);
    this.perKey.clear();
  }

  /** The global configuration. */
  get(): GuardrailConfig {
    return this.config;
  }

  /** Replaces the global configuration. */
  async set(config: GuardrailConfig): Promise<GuardrailConfig> {
    await this.repo.saveConfig(config, new Date().toISOString());
    this.config = config;
    this.rebuild();
    this.changes.publish(TOPIC);
    return config;
  }

  /** Lays a partial configuration over the global one and stores the result. */
  patch(over: GuardrailOverride): Promise<GuardrailConfig> {
    return this.set(guardrailConfigSchema.parse(mergeConfig(this.config, over)));
  }

  override(keyId: string): GuardrailOverride | undefined {
    return this.overrides.get(keyId);
  }

  overridesList(): Array<{ keyId: string; override: GuardrailOverride }> {
    return [...this.overrides].map(([keyId, override]) => ({ keyId, override }));
  }

  /** Replaces a key's override; an empty document removes it. */
  async setOverride(keyId: string, over: GuardrailOverride): Promise<void> {
    if (Object.keys(over).length === 0) return this.deleteOverride(keyId);
    await this.repo.saveOverride(keyId, over, new Date().toISOString());
    this.overrides.set(keyId, over);
    this.perKey.delete(keyId);
    this.changes.publish(TOPIC);
  }

  async deleteOverride(keyId: string): Promise<void> {
    await this.repo.deleteOverride(keyId);
    this.overrides.delete(keyId);
    this.perKey.delete(keyId);
    this.changes.publish(TOPIC);
  }

  /** The effective configuration of a key (the global one when it has no override). */
  effective(keyId?: string): GuardrailConfig {
    return this.policyFor(keyId).config;
  }

  /** The compiled policy for requests made with this key (or without a key). */
  policyFor(keyId?: string): GuardrailPolicy {
    if (keyId === undefined || this.overrides.size === 0) return this.global;
    const over = this.overrides.get(keyId);
    if (!over) return this.global;
    let p = this.perKey.get(keyId);
    if (!p) this.perKey.set(keyId, (p = new GuardrailPolicy(guardrailConfigSchema.parse(mergeConfig(this.config, over)))));
    return p;
  }
}
