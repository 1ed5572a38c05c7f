import './settings-sections.js';
import { join } from 'node:path';
import { SkillCatalog } from './skills/catalog.js';
import { DiskSkillRepository } from './skills/disk-repository.js';
import { SqlSkillRepository } from './skills/sql-repository.js';
import { registerSkills } from './skills/mcp.js';
import { skillsStage, SKILLS_STAGE_ORDER } from './skills/stage.js';
import { mkdirSync } from 'node:fs';
import { deriveCliToken } from '../shared/cli-token.js';
import { listenUrl, statePaths } from '../shared/paths.js';
import { VERSION } from '../shared/version.js';
import { PasswordStore } from './auth/password.js';
import { SessionStore } from './auth/sessions.js';
import { SqlPasswordRepository, SqlSessionRepository } from './auth/sql-repository.js';
import { createApp } from './http/app.js';
import { KeyStore } from './keys/store.js';
import { SqlKeyRepository } from './keys/sql-repository.js';
import { ComboStore } from './combos/store.js';
import { SqlComboRepository } from './combos/sql-repository.js';
import { Logger } from './logger.js';
import { ROUTES } from './routes.js';
import type { Services } from './services.js';
import { SettingsStore } from './settings/store.js';
import { configureOutboundProxy } from './net/outbound-proxy.js';
import { closeDatabase, openDatabase } from './store/db.js';
import { migrate } from './store/migrate.js';
import { loadSecretKey, setSecretKey } from './store/secrets.js';
import { SqliteDriver } from './store/sqlite-driver.js';
import type { SqlDriver } from './store/driver.js';
import { LOCAL_CHANGES, type ChangeFeed } from './store/changes.js';
import { SqlSettingsRepository } from './settings/sql-repository.js';
import { EventBus } from './events/bus.js';
import { WebhookService } from './webhooks/service.js';
import { McpService } from './mcp/server.js';
import { McpAudit } from './mcp/audit.js';
import { SqlA2aTaskRepository } from './a2a/sql-repository.js';
import { SqlMcpAuditRepository } from './mcp/audit-sql.js';
import { CatalogService } from './catalog/service.js';
import { UsageService } from './usage/service.js';
import { PricingStore } from './usage/pricing.js';
import { SqlPricingRepository } from './usage/pricing-sql.js';
import { SqlUsageRepository } from './usage/sql-repository.js';
import { SpoolingUsageWriter, USAGE_QUEUE_FILE } from './usage/spooling-writer.js';
import { LiveHub } from './live/hub.js';
import { ResponsesSocketServer } from './responses-ws/server.js';
import { ConnectionStore } from './providers/connections.js';
import { ProviderDirectory } from './providers/directory.js';
import { SyncedModels } from './providers/models.js';
import { NodeStore } from './providers/nodes.js';
import { SqlProviderRepository } from './providers/sql-repository.js';
import { QuotaService } from './quotas/index.js';
import { createHotState } from './hot/index.js';
import { modelCapabilities } from './providers/capabilities.js';
import { Resilience } from './resilience/service.js';
import { StageRegistry } from './proxy/stages.js';
import { GuardrailService } from './guardrails/store.js';
import { SqlGuardrailRepository } from './guardrails/sql-repository.js';
import { GUARDRAIL_STAGE_ORDER, guardrailStage } from './guardrails/stage.js';
import { COMPRESSION_STAGE_ORDER, compressionStage } from './compression/stage.js';
import { TokenRefresher } from './resilience/refresher.js';
import { endpointOverride } from './oauth/endpoints.js';
import { OAuthLogins } from './oauth/flows.js';
import { TrafficCapture } from './inspect/capture.js';
import { TranslatorHistory } from './insights/translator-history.js';
import { CliToolLog } from './insights/cli-tool-log.js';
import { SqlCliToolLogRepository } from './insights/cli-tool-sql.js';
import { EvalService } from './evals/service.js';
import { SqlEvalRepository } from './evals/sql-repository.js';
import { MemoryService } from './memory/service.js';
import { SqlMemoryRepository } from './memory/sql-repository.js';
import { MEMORY_STAGE_ORDER, memoryStage } from './memory/stage.js';
import { PresetStore } from './playground/presets.js';
import { SqlPresetRepository } from './playground/sql-repository.js';
import { ResponseCache } from './cache/store.js';
import { CacheKeyModes } from './cache/key-modes.js';
import { SqlCacheKeyModeRepository } from './cache/key-modes-sql.js';
import { SharedResponseCache } from './cache/shared.js';
import { SqlSyncNonceRepository } from './sync/nonces.js';
import { CACHE_STAGE_ORDER, cacheStage } from './cache/stage.js';
import { HOOK_STAGE_ORDER, hookStage } from './hooks/stage.js';
import { HookService } from './hooks/store.js';
import { SqlHookRepository } from './hooks/sql-repository.js';
import { ReasoningCache } from './reasoning/cache.js';
import { REASONING_STAGE_ORDER, reasoningStage } from './reasoning/stage.js';
import { cacheScopeMiddleware } from './cache/scope.js';
import { BackupService, backupBeforeMigrations } from './backups/service.js';
import { Metrics } from './observability/metrics.js';
import { tracingFromSettings } from './observability/setup.js';
import { traceContentStage, TRACE_CONTENT_STAGE_ORDER } from './observability/content-stage.js';
import { BatchService } from './batches/service.js';
import { DiskFileContents, SqlFileContents } from './batches/contents.js';
import { leaseMsFromEnv, LocalLeases, SqlBatchLeases } from './batches/leases.js';
import { SqlBatchRepository } from './batches/sql-repository.js';
import { routeFor, type LineRoutes } from './batches/line-call.js';
import type { PipelineDeps } from './proxy/deps.js';
import { checkSealingKey, sealedConnectionSample, resolveNodeId, resolveSecretKey } from './cluster/identity.js';
import { openSharedDatabase, type SharedDatabase } from './cluster/database.js';
import { localModuleNames } from './cluster/shared-modules.js';
import { NodeRegistry, SqlNodeRegistry } from './cluster/registry.js';

export interface BootOptions {
  home: string;
  host: string;
  port: number;
  log?: Logger;
  migrationsDir?: string;
  requestShutdown?: (reason: string) => void;
  requestRestart?: (reason: string, beforeStart?: () => void) => void;
  /** Where cluster options are read (ROUTER_NODE_ID, ROUTER_SECRET_KEY...); default: the process environment. */
  env?: NodeJS.ProcessEnv;
  /** Clock of the time-based limits (quotas); tests move it. Default: wall time. */
  clock?: () => number;
  /** Redis URL of the hot shared state (cluster mode); absent: in-process state (one machine). */
  redisUrl?: string;
  /** PostgreSQL URL of the shared durable store (cluster mode); absent: the state folder's SQLite file. */
  databaseUrl?: string;
}

/**
 * Builds every service from a state folder: opens and migrates the database, loads stores into memory,
 * derives the CLI token. Used by the daemon process and, in-process, by route tests.
 */
export async function bootServices(opts: BootOptions): Promise<Services> {
  const paths = statePaths(opts.home);
  mkdirSync(paths.home, { recursive: true, mode: 0o700 });
  const log = opts.log ?? new Logger({ file: paths.log });
  const db = openDatabase(paths.db);
  let preMigration;
  try {
    preMigration = backupBeforeMigrations(db, paths, opts.migrationsDir);
    if (preMigration) log.info('database backed up before migrations', { id: preMigration.id });
    migrate(db, opts.migrationsDir);
  } catch (err) {
    db.close();
    throw err;
  }
  // The state folder's own SQLite file (one machine: every module's storage; cluster mode: the local ones').
  const fileStorage = new SqliteDriver(db);
  let nodeId: string;
  let shared: SharedDatabase | undefined;
  try {
    nodeId = resolveNodeId(paths.home, opts.env);
    const givenKey = resolveSecretKey(opts.env);
    if (givenKey) {
      setSecretKey(paths.secretKey, givenKey);
      await checkSealingKey(new SqlSettingsRepository(fileStorage), () => sealedConnectionSample(new SqlProviderRepository(fileStorage)), givenKey);
    }
    if (opts.databaseUrl) {
      // Cluster mode: the modules on the storage seam keep their records in the shared PostgreSQL database.
      shared = await openSharedDatabase({ url: opts.databaseUrl, nodeId, sealingKey: givenKey ?? loadSecretKey(paths.secretKey), log });
      shared.start();
      log.info('cluster mode: shared database', { url: shared.url, nodeId });
      const local = localModuleNames();
      if (local.length > 0) log.warn('cluster mode: these modules still keep their records in this node\'s own SQLite file, not shared with the other nodes', { modules: local });
    }
  } catch (err) {
    db.close();
    throw err;
  }
  const cliToken = deriveCliToken(paths.cliSalt, true);
  if (!cliToken) throw new Error('cannot create the CLI token salt in the state folder');
  // Modules reach storage through their ports over one driver (SQLite here; PostgreSQL in cluster mode).
  const storage: SqlDriver = shared?.driver ?? fileStorage;
  // Other nodes' writes: each store on the seam publishes its topic after a write and reloads on a notice.
  const changes: ChangeFeed = shared ? await shared.startChanges(nodeId) : LOCAL_CHANGES;
  const settings = await SettingsStore.create(new SqlSettingsRepository(storage), {
    keyFile: paths.secretKey,
    changes,
    onError: (error) => log.error('settings reload failed', { error: error instanceof Error ? error.message : String(error) }),
  });
  configureOutboundProxy(settings.get().outboundProxy);
  settings.onChange((next, changed) => {
    if (changed.includes('outboundProxy')) configureOutboundProxy(next.outboundProxy);
  });
  // The oauthEndpoints setting's apiBaseUrl moves a provider's API (mock servers, private deployments).
  const apiBase = (providerId: string) => endpointOverride(settings.get(), providerId)?.apiBaseUrl;
  const keyRepo = new SqlKeyRepository(storage);
  const keys = new KeyStore(keyRepo, await keyRepo.loadAll(), changes);
  const providerRepo = new SqlProviderRepository(storage);
  const providerReloadFailed = (error: unknown) => log.error('providers reload failed', { error: error instanceof Error ? error.message : String(error) });
  const connections = await ConnectionStore.create(providerRepo, paths.secretKey, changes, providerReloadFailed);
  const nodes = await NodeStore.create(providerRepo, changes, providerReloadFailed);
  const syncedModels = await SyncedModels.create(providerRepo, changes, providerReloadFailed);
  const providerDirectory = new ProviderDirectory(nodes, connections, syncedModels);
  providerDirectory.setApiBaseOverride(apiBase);
  settings.onChange((_next, changed) => {
    if (changed.includes('oauthEndpoints')) providerDirectory.setApiBaseOverride(apiBase);
  });
  const events = new EventBus((error, event) =>
    log.error('event listener failed', { event: event.event, error: error instanceof Error ? error.message : String(error) }),
  );
  const hot = await createHotState({ redisUrl: opts.redisUrl, nodeId, log });
  const webhooks = new WebhookService({ db, settings, keyFile: paths.secretKey, log, hot });
  events.labelProviders((id) => providerDirectory.label(id));
  webhooks.attach(events);
  // ROUTER_USAGE_DISABLED=1 turns usage recording off (the baseline of bench/usage-overhead.mjs).
  const catalog = new CatalogService({ file: paths.catalog, log });
  providerDirectory.setCatalog(() => catalog.get());
  // `router catalog update` refreshes the providers generated from the catalog (docs/catalog.md).
  const updatedProviders = catalog.storedDataProviders();
  if (updatedProviders) providerDirectory.setDataProviders(updatedProviders);
  catalog.onChange(() => providerDirectory.setDataProviders(catalog.storedDataProviders() ?? []));
  // Usage rows: the writer worker on the embedded file; in cluster mode batched inserts into the shared
  // database, queued on disk in the state folder while it is unreachable (usage/spooling-writer.ts).
  const usageRepo = new SqlUsageRepository(storage);
  const usageWriter = storage.dialect === 'postgres' ? new SpoolingUsageWriter({ repo: usageRepo, file: join(paths.home, USAGE_QUEUE_FILE), log, nodeId }) : undefined;
  const pricing = await PricingStore.create(new SqlPricingRepository(storage), catalog, changes, (error) =>
    log.error('pricing reload failed', { error: error instanceof Error ? error.message : String(error) }),
  );
  const usage = new UsageService({ db, settings, events, log, enabled: process.env.ROUTER_USAGE_DISABLED !== '1', pricing, repo: usageRepo, writer: usageWriter });
  const stages = new StageRegistry();
  const cache = new ResponseCache({ db, settings, log, now: opts.clock });
  // With Redis, the cache is the cluster's (cache/shared.ts); this node's own answers while Redis is down.
  const sharedCache = hot.shared ? new SharedResponseCache({ hot, local: cache, settings, keyFile: paths.secretKey, log, now: opts.clock }) : undefined;
  const cacheModes = await CacheKeyModes.create(new SqlCacheKeyModeRepository(storage), changes, (error) =>
    log.error('cache key modes reload failed', { error: error instanceof Error ? error.message : String(error) }),
  );
  stages.register(cacheStage(sharedCache ?? cache, cacheModes), CACHE_STAGE_ORDER);
  const guardrails = await GuardrailService.create(new SqlGuardrailRepository(storage), changes);
  stages.register(guardrailStage(guardrails), GUARDRAIL_STAGE_ORDER);
  stages.register(compressionStage(), COMPRESSION_STAGE_ORDER);
  const hooks = await HookService.create(new SqlHookRepository(storage), changes, log);
  stages.register(hookStage(hooks), HOOK_STAGE_ORDER);
  // One machine: the state folder's skills/ as always; a shared database: its rows, on every node.
  const skills = await SkillCatalog.create(
    storage.dialect === 'sqlite' ? new DiskSkillRepository(join(paths.home, 'skills')) : new SqlSkillRepository(storage),
    changes,
    (error) => log.error('skills reload failed', { error: error instanceof Error ? error.message : String(error) }),
  );
  stages.register(skillsStage(skills), SKILLS_STAGE_ORDER);
  const reasoningCache = new ReasoningCache(() => {
    const s = settings.get();
    return { maxEntries: s.reasoningCacheMaxEntries, maxBytes: s.reasoningCacheMaxBytes, ttlMs: s.reasoningCacheTtlSeconds * 1000 };
  }, opts.clock);
  stages.register(reasoningStage(reasoningCache, settings), REASONING_STAGE_ORDER);
  const label = (id: string) => providerDirectory.label(id);
  const resilience = new Resilience(db, connections, settings, events, log, label, hot);
  const tracing = tracingFromSettings({ settings, usage, connections, label, version: VERSION, log });
  if (tracing?.capturesContent) stages.register(traceContentStage(tracing), TRACE_CONTENT_STAGE_ORDER);
  const knownModel = (providerId: string, model: string) => {
    const def = providerDirectory.provider(providerId);
    return def !== undefined && providerDirectory.models(def).some((m) => m.id === model);
  };
  const metrics = new Metrics({ usage, resilience, connections, label, knownModel, version: VERSION, spansDropped: tracing && (() => tracing.dropped), hot: () => hot.health(), database: shared && (() => shared.health()) }).attach();
  const quotas = new QuotaService({
    db,
    settings,
    keys,
    events,
    log,
    now: opts.clock,
    hot,
    price: (provider, model) => usage.pricing.lookup(provider, model),
    maxOutput: (provider, model) => {
      const def = providerDirectory.provider(provider);
      return def ? modelCapabilities(def, model).maxOutputTokens : undefined;
    },
    onRecord: (fn) => usage.onRecord(fn),
  });
  const combos = await ComboStore.create(
    new SqlComboRepository(storage),
    (error) => log.error('combo change listener or reload failed', { error: error instanceof Error ? error.message : String(error) }),
    changes,
  );
  // The request pipeline, built before the features that call it (memory, evals, MCP, batches, the
  // Responses socket take it in their constructors); stages registered after this still run (the registry is read per request).
  const pipeline: PipelineDeps = {
    version: VERSION,
    log,
    settings,
    events,
    connections,
    syncedModels,
    providers: providerDirectory,
    combos,
    resilience,
    quotas,
    stages,
    usage,
    metrics,
    tracing,
    capture: new TrafficCapture(settings),
    translatorHistory: new TranslatorHistory(settings),
  };
  const memory = await MemoryService.create({ repo: new SqlMemoryRepository(storage), changes, log, keyFile: paths.secretKey, pipeline });
  stages.register(memoryStage(memory), MEMORY_STAGE_ORDER);
  const services: Services = {
    ...pipeline,
    db,
    paths,
    startedAt: Date.now(),
    listen: { host: opts.host, port: opts.port, url: listenUrl(opts.host, opts.port) },
    keys,
    hot,
    nodes,
    guardrails,
    hooks,
    reasoningCache,
    cache,
    sharedCache,
    cacheModes,
    syncNonces: new SqlSyncNonceRepository(storage),
    presets: new PresetStore(new SqlPresetRepository(storage)),
    tokenRefresher: new TokenRefresher({ connections, settings, events, hot }, providerDirectory, log),
    oauth: new OAuthLogins(() => services),
    cliToolLog: new CliToolLog(new SqlCliToolLogRepository(storage)),
    evals: await EvalService.create(new SqlEvalRepository(storage), nodeId, pipeline),
    sessions: await SessionStore.create(new SqlSessionRepository(storage), changes, log),
    passwords: new PasswordStore(new SqlPasswordRepository(storage)),
    memory,
    webhooks,
    catalog,
    live: new LiveHub({ usage, log, names: { label, keys, connections }, startedAt: Date.now(), version: VERSION, hot }),
    responsesSocket: new ResponsesSocketServer({ ...pipeline, keys }),
    cliToken,
    nodeId,
    sharedDatabase: shared,
    clusterNodes:
      shared &&
      new NodeRegistry(
        new SqlNodeRegistry(shared.driver),
        () => ({ nodeId, url: services.listen.url, version: VERSION }),
        (err) => shared.failed(err),
      ),
    changes,
    a2aTasks: new SqlA2aTaskRepository(storage),
    routeTable: ROUTES,
    requestShutdown: opts.requestShutdown ?? (() => {}),
    requestRestart: opts.requestRestart ?? (() => {}),
    backups: new BackupService({
      db,
      paths,
      settings,
      log,
      migrationsDir: opts.migrationsDir,
      flush: async () => {
        await keys.flush();
        await usage.flush();
      },
    }),
    mcp: new McpService(new McpAudit(new SqlMcpAuditRepository(storage), log), { ...pipeline, keys, memory, webhooks }),
    skills,
    // One machine: file contents under the state folder and every batch run here; a shared database: contents
    // in its rows and a lease per running batch, so another node resumes a dead node's batches.
    batches: new BatchService({
      repo: new SqlBatchRepository(storage),
      contents: storage.dialect === 'sqlite' ? new DiskFileContents(join(paths.home, 'files')) : new SqlFileContents(storage),
      leases: storage.dialect === 'sqlite' ? new LocalLeases() : new SqlBatchLeases(storage, nodeId, leaseMsFromEnv(opts.env)),
      concurrency: () => settings.get().batchConcurrency,
      changes,
      deps: { ...pipeline, keys, routes: lineRoutes(() => services) },
    }),
  };
  if (preMigration) services.backups.prune();
  memory.start();
  services.mcp.extend((server) => registerSkills(server, skills));
  // The live feed carries batch events and model mismatches too (webhooks subscribe to the bus themselves).
  for (const name of ['batch.completed', 'batch.failed', 'batch.cancelled', 'model.mismatch'] as const) {
    events.on(name, (ev) => services.live.share({ type: 'event', event: ev.event, timestamp: ev.timestamp, data: ev.data }));
  }
  // Batches left unfinished by the last stop continue.
  await services.batches.resume();
  return services;
}

/**
 * Batch lines go through the route a client calls, with the daemon's route context (the batch routes are
 * in that context too, hence the daemon is read when a line runs, not when batches are built).
 */
export function lineRoutes(daemon: () => Services): LineRoutes {
  return {
    find: (endpoint) => routeFor(daemon().routeTable, endpoint),
    call: (route, ctx) => route.handler({ ...ctx, services: daemon(), params: {}, body: undefined, query: undefined }),
  };
}

/** Builds the h3 app for a set of services. */
export function buildApp(services: Services) {
  // Cache directives (x-router-cache, Cache-Control) reach the cache stage through a request scope.
  return createApp(services.routeTable, services).use(cacheScopeMiddleware);
}

/** Persists what is batched in memory and closes the database. */
export function closeServices(services: Services): void {
  // On SQLite the flush writes during the call, before the database closes below.
  services.keys.flush().catch((err: unknown) => services.log.error('key last-use flush failed', { error: err instanceof Error ? err.message : String(err) }));
  // Live clients are told goodbye; queued usage rows are written while the database is still open.
  services.live.close();
  services.responsesSocket.close();
  services.mcp.close();
  services.metrics.close();
  void services.tracing?.close();
  services.usage.close();
  services.quotas.close();
  services.resilience.close();
  services.memory.close();
  services.batches.close();
  services.cache.close();
  services.tokenRefresher.stop();
  services.oauth.close();
  void services.hot.close();
  services.backups.stop();
  // Stop deliveries before the database closes: in-flight ones must not record into a closed handle.
  services.webhooks.close();
  services.events.clear();
  services.clusterNodes?.stop();
  void services.sharedDatabase?.close();
  closeDatabase(services.db);
}
