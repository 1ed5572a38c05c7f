/**
 * Which modules keep their durable records in the shared database in cluster mode (`--database-url`), and
 * which still keep them in each node's own SQLite file. THE one list: GET /api/cluster shows it
 * (`database.sharedModules`, `database.localModules`) and a cluster node warns about the local ones at start.
 *
 * A module moves from LOCAL to SHARED in the commit that puts it on the storage seam (its port, SQL adapter,
 * migrations/pg/ file and port tests; docs/storage.md "Modules on the seam"). Until every durable module has
 * moved, a cluster is honest about what its nodes do not share: records of a local module written on one
 * node are not seen by the others.
 */
export interface ModuleStorage {
  /** The module's name (also its change-feed topic once shared). */
  module: string;
  /** Its tables. */
  tables: readonly string[];
  /** Why a local module stays per node even in cluster mode (docs/storage.md); absent: not ported yet. */
  perNode?: string;
}

/** On the seam: in the shared PostgreSQL database in cluster mode (the SQLite file on one machine). */
export const SHARED_MODULES: readonly ModuleStorage[] = [
  { module: 'keys', tables: ['api_keys'] },
  { module: 'cluster', tables: ['cluster_meta', 'cluster_nodes'] },
  { module: 'presets', tables: ['playground_presets'] },
  { module: 'settings', tables: ['settings'] },
  { module: 'combos', tables: ['combos'] },
  // File contents and leases are cluster-only tables (one machine keeps contents on disk, runs every batch).
  { module: 'batches', tables: ['batches', 'batch_lines', 'batch_files', 'batch_file_chunks', 'batch_leases'] },
  { module: 'hooks', tables: ['middleware_hooks'] },
  { module: 'guardrails', tables: ['guardrail_config', 'guardrail_key_overrides'] },
  { module: 'sessions', tables: ['sessions', 'auth_password'] },
  { module: 'memory', tables: ['memories', 'memory_vectors', 'memory_meta', 'memory_settings', 'memory_key_settings'] },
  { module: 'cli tool log', tables: ['cli_tool_changes'] },
  { module: 'usage', tables: ['usage_log'] },
  { module: 'pricing', tables: ['pricing_overrides'] },
  { module: 'mcp audit', tables: ['mcp_audit'] },
  { module: 'providers', tables: ['provider_nodes', 'provider_connections', 'provider_models'] },
  { module: 'cache key modes', tables: ['cache_key_settings'] },
  { module: 'a2a tasks', tables: ['a2a_tasks'] },
  { module: 'evals', tables: ['evals', 'eval_runs', 'eval_results'] },
  // Not configuration: one atomic insert per admitted sync request, no snapshot, no change topic.
  { module: 'sync nonces', tables: ['sync_nonces'] },
  // One machine keeps skills as folders under the state folder; these are the cluster's tables.
  { module: 'skills', tables: ['skills', 'skill_files'] },
];

/** Not on the seam yet: each cluster node keeps these in its own state folder's SQLite file. */
export const LOCAL_MODULES: readonly ModuleStorage[] = [
  { module: 'webhooks', tables: ['webhooks'] },
  { module: 'quota counters', tables: ['quota_counters'], perNode: "a node's own counters, restored at its start; cluster-wide limits count in Redis" },
  { module: 'resilience state', tables: ['resilience_state'], perNode: "a node's breakers and cooldowns, restored at its start; shared ones live in Redis" },
  { module: 'response cache', tables: ['response_cache'], perNode: 'with --redis-url the cache is shared in Redis (cache/shared.ts); this table is each node\'s own copy, which answers while Redis is down' },
];

export const sharedModuleNames = (): string[] => SHARED_MODULES.map((m) => m.module);
export const localModuleNames = (): string[] => LOCAL_MODULES.map((m) => m.module);
