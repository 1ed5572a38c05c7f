import type { Db } from '../store/db.js';
import { guardrailConfigSchema, guardrailOverrideSchema, mergeConfig, type GuardrailConfig, type GuardrailOverride } from './config.js';
import { GuardrailPolicy } from './policy.js';

/**
 * Guardrail configuration with one owner: the global document and per-key overrides, read once into
 * memory and written through to the database. Compiled policies are cached (one for the global config,
 * one per key with an override) and rebuilt only after a change, so a request costs one map lookup.
 */
export class GuardrailService {
  private config: GuardrailConfig;
  private readonly overrides = new Map<string, GuardrailOverride>();
  private global!: GuardrailPolicy;
  private readonly perKey = new Map<string, GuardrailPolicy>();

  constructor(private readonly db: Db) {
    const row = db.prepare('SELECT config FROM guardrail_config WHERE id = 1').get() as { config: string } | undefined;
    // A stored document that no longer validates (older bounds) falls back to the defaults rather than failing start.
    const parsed = row ? guardrailConfigSchema.safeParse(JSON.parse(row.config)) : undefined;
    this.config = parsed?.success ? parsed.data : guardrailConfigSchema.parse({});
    for (const r of db.prepare('SELECT api_key_id, config FROM guardrail_key_overrides').all() as Array<{ api_key_id: string; config: string }>) {
      const o = guardrailOverrideSchema.safeParse(JSON.parse(r.config));
      if (o.success) this.overrides.set(r.api_key_id, o.data);
    }
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
  set(config: GuardrailConfig): GuardrailConfig {
    this.db
      .prepare('INSERT INTO guardrail_config (id, config, updated_at) VALUES (1, ?, ?) ON CONFLICT(id) DO UPDATE SET config = excluded.config, updated_at = excluded.updated_at')
      .run(JSON.stringify(config), new Date().toISOString());
    this.config = config;
    this.rebuild();
    return config;
  }

  /** Lays a partial configuration over the global one and stores the result. */
  patch(over: GuardrailOverride): GuardrailConfig {
    return this.set(guardrailConfigSchema.parse(mergeConfig(this.config, over)));
  }

  override(keyId: string): GuardrailOverride | undefined {
    return this.overrides.get(keyId);
  }

  overridesList(): Array<{ keyId: string; override: GuardrailOverride }> {
    return [...this.overrides].map(([keyId, override]) => ({ keyId, override }));
  }

  /** Replaces a key's override; an empty document removes it. */
  setOverride(keyId: string, over: GuardrailOverride): void {
    if (Object.keys(over).length === 0) return this.deleteOverride(keyId);
    this.db
      .prepare(
        'INSERT INTO guardrail_key_overrides (api_key_id, config, updated_at) VALUES (?, ?, ?) ON CONFLICT(api_key_id) DO UPDATE SET config = excluded.config, updated_at = excluded.updated_at',
      )
      .run(keyId, JSON.stringify(over), new Date().toISOString());
    this.overrides.set(keyId, over);
    this.perKey.delete(keyId);
  }

  deleteOverride(keyId: string): void {
    this.db.prepare('DELETE FROM guardrail_key_overrides WHERE api_key_id = ?').run(keyId);
    this.overrides.delete(keyId);
    this.perKey.delete(keyId);
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
