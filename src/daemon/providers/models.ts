import { LOCAL_CHANGES, type ChangeFeed } from '../store/changes.js';
import { settledLoad, type ProviderRepository, type StoredModel } from './port.js';
import type { ModelInfo } from './types.js';

/** The change-feed topic of synced model lists. */
export const MODELS_TOPIC = 'provider-models';

const byId = (a: ModelInfo, b: ModelInfo): number => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

function grouped(rows: readonly StoredModel[]): Map<string, ModelInfo[]> {
  const out = new Map<string, ModelInfo[]>();
  for (const r of rows) {
    const list = out.get(r.provider) ?? [];
    list.push({ id: r.modelId, contextLength: r.contextLength ?? undefined });
    out.set(r.provider, list);
  }
  // Code-point order on both dialects (PostgreSQL's ORDER BY follows the database's collation).
  for (const list of out.values()) list.sort(byId);
  return out;
}

/**
 * Models synced from upstreams; when a provider has synced models they replace its static list (spec, proxy
 * endpoints: synced models replace the static list). A snapshot in memory; `replace` stores through the
 * `ProviderRepository` port first, publishes `MODELS_TOPIC`, and another node's notice reloads it.
 */
export class SyncedModels {
  private byProvider: Map<string, ModelInfo[]>;
  /** Local writes so far: a reload that overlapped one loads again. */
  private writes = 0;

  constructor(
    private readonly repo: ProviderRepository,
    initial: readonly StoredModel[],
    private readonly changes: ChangeFeed = LOCAL_CHANGES,
    onError: (error: unknown) => void = () => {},
  ) {
    this.byProvider = grouped(initial);
    this.changes.subscribe(MODELS_TOPIC, () => this.reload().catch(onError));
  }

  static async create(repo: ProviderRepository, changes?: ChangeFeed, onError?: (error: unknown) => void): Promise<SyncedModels> {
    return new SyncedModels(repo, await repo.loadModels(), changes, onError);
  }

  /** Replaces the snapshot with what storage holds now (another node synced a provider). */
  async reload(): Promise<void> {
    const rows = await settledLoad(() => this.writes, () => this.repo.loadModels());
    this.byProvider = grouped(rows);
  }

  get(provider: string): ModelInfo[] | undefined {
    return this.byProvider.get(provider);
  }

  /**
   * Replaces a provider's synced list in one transaction. An empty list means "no synced models": the
   * static list applies again (as it would after a restart, when no rows are found).
   */
  async replace(provider: string, models: ModelInfo[]): Promise<void> {
    this.writes++;
    await this.repo.replaceModels(provider, models.map((m) => ({ id: m.id, contextLength: m.contextLength ?? null })), new Date().toISOString());
    this.changes.publish(MODELS_TOPIC);
    // Same view as a restart reads back: one entry per id (the last wins), ordered by id.
    const unique = [...new Map(models.map((m) => [m.id, m])).values()].sort(byId);
    if (unique.length === 0) this.byProvider.delete(provider);
    else this.byProvider.set(provider, unique);
  }
}
