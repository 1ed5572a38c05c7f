/** `GET /api/cluster`: this daemon's place in a cluster (CONTRACT "Wave three > Cluster mode"). */
export interface ClusterReply {
  /** `single`: the embedded SQLite state of one machine; `cluster`: a shared database (and Redis). */
  mode: 'single' | 'cluster';
  nodeId: string;
  /** Every node known to share this state; on one machine, this daemon alone. */
  nodes: ClusterNode[];
  /** The durable store; its URL, when shown, never carries a password. */
  database: {
    kind: 'sqlite' | 'postgres';
    healthy: boolean;
    latencyMs: number | null;
    url?: string;
    /** Cluster mode: the modules whose records are in the shared database. */
    sharedModules?: string[];
    /** Cluster mode: the modules that still keep their records in each node's own SQLite file (not shared). */
    localModules?: string[];
  };
  /** The hot shared state (limits, cooldowns, breakers...). */
  redis: { configured: boolean; healthy: boolean; latencyMs: number | null; url?: string };
}

export interface ClusterNode {
  nodeId: string;
  /** The node's listen address. */
  url: string;
  version: string;
  lastSeenAt: string;
  healthy: boolean;
}
