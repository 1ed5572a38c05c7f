import type { Db } from '../store/db.js';
import type { ModelInfo } from './types.js';

/** Models synced from upstreams; when a provider has synced models they replace its static list (spec, proxy endpoints: synced models replace the static list). */
export class SyncedModels {
  private byProvider = new Map<string, ModelInfo[]>();

  constructor(private readonly db: Db) {
    for (const r of db.prepare('SELECT provider, model_id, context_length FROM provider_models ORDER BY model_id').all() as Array<{
      provider: string;
      model_id: string;
      context_length: number | null;
    }>) {
      const list = this.byProvider.get(r.provider) ?? [];
      list.push({ id: r.model_id, contextLength: r.context_length ?? undefined });
      this.byProvider.set(r.provider, list);
    }
  }

  get(provider: string): ModelInfo[] | undefined {
    return this.byProvider.get(provider);
  }

  /**
   * Replaces a provider's synced list in one transaction. An empty list means "no synced models": the
   * static list applies again (as it would after a restart, when no rows are found).
   */
  replace(provider: string, models: ModelInfo[]): void {
    const now = new Date().toISOString();
    const insert = this.db.prepare('INSERT OR REPLACE INTO provider_models (provider, model_id, context_length, synced_at) VALUES (?, ?, ?, ?)');
    this.db.transaction(() => {
      this.db.prepare('DELETE FROM provider_models WHERE provider = ?').run(provider);
      for (const m of models) insert.run(provider, m.id, m.contextLength ?? null, now);
    })();
    // Same view as a restart reads back: one entry per id (the last wins, as INSERT OR REPLACE), ordered by id.
    const unique = [...new Map(models.map((m) => [m.id, m])).values()].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    if (unique.length === 0) this.byProvider.delete(provider);
    else this.byProvider.set(provider, unique);
  }
}
