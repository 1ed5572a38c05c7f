import { RouterError } from '../http/errors.js';
import { connectionProxy } from '../net/outbound-proxy.js';
import type { Target } from './target.js';
import type { Connection, ConnectionStore } from './connections.js';
import type { SyncedModels } from './models.js';
import { checkModelId } from './model-id.js';
import { nodeProvider, type NodeStore } from './nodes.js';
import { dataProvider } from './compatible/catalog.js';
import { BUILTIN_PROVIDERS, builtinProvider, codedProvider } from './registry.js';
import type { ModelInfo, ProviderDef } from './types.js';
import type { ModelCatalog } from '../catalog/catalog.js';
import type { DataProvider } from '../catalog/snapshot.js';

/** Distinct (provider, model) target lists kept at once; past it the cache starts over. */
const TARGET_CACHE_MAX = 2_000;

export interface CatalogModel {
  id: string;
  provider: string;
  context_length?: number;
}

/**
 * Answers "which provider is this?" for built-in ids and aliases, provider-node ids and node prefixes, and
 * turns a `<provider>/<model>` into the targets (accounts) that can serve it. Node definitions are rebuilt
 * only when nodes change.
 */
export class ProviderDirectory {
  private nodeDefs = new Map<string, ProviderDef>();
  private nodeByPrefix = new Map<string, ProviderDef>();
  private prefixById = new Map<string, string>();
  /** Data providers from an updated catalog (setDataProviders), by id: new ones and newer definitions. */
  private dataDefs = new Map<string, ProviderDef>();
  private dataList: readonly DataProvider[] = [];
  /**
   * Built target lists per (provider, model, public model): routing reuses them instead of building one
   * object per account per request. Dropped whenever connections or nodes change; bounded.
   */
  private targetCache = new Map<string, readonly Target[]>();
  /** The model catalog (boot wires it; read on the first model list asked for). */
  private modelCatalog?: () => ModelCatalog;
  /** Model lists with the catalog's figures, per provider, while its own list and the catalog stay the same. */
  private withCatalog = new Map<string, { own: ModelInfo[]; catalog: ModelCatalog; list: ModelInfo[] }>();
  /** A provider's API base URL from the `oauthEndpoints` setting (apiBaseUrl), when one is set. */
  private apiBaseOverride: (providerId: string) => string | undefined = () => undefined;

  constructor(
    private readonly nodes: NodeStore,
    private readonly connections: ConnectionStore,
    private readonly synced: SyncedModels,
  ) {
    this.refreshNodes();
    nodes.onChange(() => this.refreshNodes());
    connections.onChange(() => (this.targetCache = new Map()));
  }

  /** Sets where API base overrides come from (boot wires the settings); drops the built targets. */
  setApiBaseOverride(fn: (providerId: string) => string | undefined): void {
    this.apiBaseOverride = fn;
    this.targetCache = new Map();
  }

  /** Rebuilds node-derived providers (call after node changes). */
  refreshNodes(): void {
    this.targetCache = new Map();
    this.nodeDefs = new Map();
    this.nodeByPrefix = new Map();
    this.prefixById = new Map();
    for (const n of this.nodes.list()) {
      const def = nodeProvider(n);
      this.nodeDefs.set(n.id, def);
      this.nodeByPrefix.set(n.prefix, def);
      this.prefixById.set(n.id, n.prefix);
    }
    this.buildDataDefs();
  }

  /**
   * The data providers of an updated catalog (`router catalog update`, docs/catalog.md): each one new or
   * with a newer definition (base URL, name, format) serves from now on, without a restart. The user's own
   * definitions win: a provider written in code keeps its code, a provider node keeps its prefix. Shipped
   * data providers the update no longer lists stay (their accounts keep working).
   */
  setDataProviders(list: readonly DataProvider[]): void {
    this.dataList = list;
    this.buildDataDefs();
  }

  private buildDataDefs(): void {
    this.dataDefs = new Map();
    this.withCatalog = new Map();
    this.targetCache = new Map();
    for (const p of this.dataList) {
      if (codedProvider(p.id) || this.nodeByPrefix.has(p.id)) continue;
      this.dataDefs.set(p.id, dataProvider(p));
    }
  }

  /** A provider by built-in id or alias, node id, or node prefix. */
  provider(key: string): ProviderDef | undefined {
    return this.dataDefs.get(key) ?? builtinProvider(key) ?? this.nodeDefs.get(key) ?? this.nodeByPrefix.get(key);
  }

  /** Every provider: built-ins then nodes. */
  all(): ProviderDef[] {
    if (this.dataDefs.size === 0) return [...BUILTIN_PROVIDERS, ...this.nodeDefs.values()];
    const shipped = BUILTIN_PROVIDERS.map((p) => this.dataDefs.get(p.id) ?? p);
    const added = [...this.dataDefs.values()].filter((p) => !builtinProvider(p.id));
    return [...shipped, ...added, ...this.nodeDefs.values()];
  }

  /** Sets where the model catalog comes from (boot wires the catalog service). */
  setCatalog(get: () => ModelCatalog): void {
    this.modelCatalog = get;
    this.withCatalog = new Map();
  }

  /**
   * Models of a provider: synced ones when present, else the static list, else (a provider from the
   * catalog's data) the catalog's. A model the catalog knows takes the catalog's context window and max
   * output, so `/v1/models` and `GET /api/catalog/models` agree. The same array is returned until the list
   * or the catalog changes (callers memoize by it).
   */
  models(def: ProviderDef): ModelInfo[] {
    const own = this.synced.get(def.id) ?? def.models;
    if (!this.modelCatalog) return own;
    const catalog = this.modelCatalog();
    const hit = this.withCatalog.get(def.id);
    if (hit && hit.own === own && hit.catalog === catalog) return hit.list;
    const list = own.length === 0 && def.catalogModels ? catalogModels(catalog, def.id) : own.map((m) => withCatalogFigures(catalog, def.id, m));
    this.withCatalog.set(def.id, { own, catalog, list });
    return list;
  }

  /**
   * Whether requests can reach this provider now: no-auth providers always, others with an active
   * connection, a provider node also with no connection at all (a node without auth).
   */
  usable(def: ProviderDef): boolean {
    return def.kind === 'local' || this.connections.active(def.id).length > 0 || this.keylessNode(def);
  }

  /**
   * A node called without a credential: it has no connection at all. A node whose connections are all
   * disabled is not called: its owner turned its accounts off, and the upstream expects one.
   */
  private keylessNode(def: ProviderDef): boolean {
    return this.nodeDefs.has(def.id) && !this.connections.hasAny(def.id);
  }

  /** Splits `<provider>/<model>` at the first slash; model ids may contain more slashes. */
  split(model: string): { def: ProviderDef; model: string } | undefined {
    const slash = model.indexOf('/');
    if (slash <= 0 || slash === model.length - 1) return undefined;
    const def = this.provider(model.slice(0, slash));
    return def ? { def, model: model.slice(slash + 1) } : undefined;
  }

  /**
   * The targets able to serve `<provider>/<model>`, one per active account in priority order. No-auth
   * providers and provider nodes work without a stored connection. The list and its targets are shared
   * between requests until the next connection or node change: read-only (copy a target to annotate it).
   */
  targets(def: ProviderDef, model: string, publicModel: string): readonly Target[] {
    const key = `${def.id}\u0000${model}\u0000${publicModel}`;
    const hit = this.targetCache.get(key);
    if (hit) return hit;
    const built = this.buildTargets(def, model, publicModel);
    if (this.targetCache.size >= TARGET_CACHE_MAX) this.targetCache.clear();
    this.targetCache.set(key, built);
    return built;
  }

  private buildTargets(def: ProviderDef, model: string, publicModel: string): readonly Target[] {
    // Checked on a cache miss only: an id the grammar refuses is never cached, so every use meets this.
    checkModelId(def, model, publicModel);
    const conns = this.connections.active(def.id);
    const base = { provider: def, model, publicModel, format: def.format };
    if (conns.length === 0) {
      if (def.kind === 'local' || this.keylessNode(def)) {
        return [{ ...base, credential: {}, baseUrl: def.baseUrl, headers: {} }];
      }
      const fix = this.connections.hasAny(def.id) ? 'every connection of it is disabled; enable one (Providers page, or PUT /api/providers/{id} with isActive true)' : 'add one with POST /api/providers';
      throw new RouterError(400, `No active connection for provider '${this.label(def.id)}'; ${fix}.`, {
        code: 'no_active_connection',
      });
    }
    return conns.map((c) => this.connectionTarget(def, c, model, publicModel));
  }

  /**
   * One connection as a target: its base URL (the connection's own, else the oauthEndpoints setting's
   * apiBaseUrl, else the provider's), the headers its data adds, its proxy, project and token expiry.
   * Model lists and health checks use it too, so they reach the same place requests do.
   */
  connectionTarget(def: ProviderDef, c: Connection, model = '', publicModel = ''): Target {
    const data = c.providerSpecificData;
    const target: Target = {
      provider: def,
      model,
      publicModel,
      format: def.format,
      connectionId: c.id,
      credential: c.credential,
      baseUrl: typeof data.baseUrl === 'string' ? data.baseUrl : (def.connectionBaseUrl?.(data) ?? this.apiBaseOverride(def.id) ?? def.baseUrl),
      headers: def.connectionHeaders?.(data) ?? {},
      proxy: connectionProxy(c),
    };
    if (typeof data.projectId === 'string') target.project = data.projectId;
    if (c.authKind === 'oauth' && c.expiresAt) target.expiresAt = Date.parse(c.expiresAt);
    return target;
  }

  /** Catalog entries of configured and no-auth providers (spec, proxy endpoints: the catalog lists no-auth providers and configured providers' models). */
  catalog(onlyUsable = false): CatalogModel[] {
    const out: CatalogModel[] = [];
    for (const def of this.all()) {
      const configured = def.kind === 'local' || this.connections.active(def.id).length > 0 || this.nodeDefs.has(def.id);
      if (!configured) continue;
      if (onlyUsable && def.kind !== 'local' && this.connections.active(def.id).length === 0) continue;
      for (const m of this.models(def)) {
        const entry: CatalogModel = { id: `${this.publicId(def)}/${m.id}`, provider: this.publicId(def) };
        if (m.contextLength) entry.context_length = m.contextLength;
        out.push(entry);
      }
    }
    return out;
  }

  /** The name a provider appears under in model ids: a node's prefix, else its id. */
  publicId(def: ProviderDef): string {
    return this.label(def.id);
  }

  /**
   * How a person reads a stored provider id (request logs, usage, events, CLI): a node's prefix instead of
   * its UUID; built-in ids (and ids of deleted nodes) as they are.
   */
  label(id: string): string {
    return this.prefixById.get(id) ?? id;
  }

  /** The stored provider id a filter names: a built-in id or alias, a node prefix or a node id. */
  idFor(nameOrId: string): string {
    return this.provider(nameOrId)?.id ?? nameOrId;
  }
}

/** A catalog provider's models as router lists them. */
function catalogModels(catalog: ModelCatalog, provider: string): ModelInfo[] {
  return (catalog.provider(provider)?.models ?? []).map(([id, , context, output, , , flags]) => {
    const m: ModelInfo = { id };
    if (context !== null) m.contextLength = context;
    if (output !== null) m.maxOutputTokens = output;
    if (flags.includes('r')) m.reasoning = true;
    return m;
  });
}

/** A listed model with the catalog's context window and max output, when the catalog has the model. */
function withCatalogFigures(catalog: ModelCatalog, provider: string, m: ModelInfo): ModelInfo {
  const c = catalog.model(provider, m.id);
  if (!c || (c[2] === null && c[3] === null)) return m;
  return { ...m, contextLength: c[2] ?? m.contextLength, maxOutputTokens: c[3] ?? m.maxOutputTokens };
}
