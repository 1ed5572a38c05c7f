-- Cluster mode's own records (PostgreSQL only: one machine has no cluster to describe).
-- cluster_meta: values every node must agree on, e.g. the sealing-key check value (a known text sealed with
-- the cluster's ROUTER_SECRET_KEY by the first node; a node whose key cannot open it refuses to start).
CREATE TABLE cluster_meta (
  key        TEXT PRIMARY KEY,
  value      TEXT NOT NULL,
  updated_at TEXT NOT NULL
);

-- cluster_nodes: the node registry. Each node upserts its row at start and every few seconds (heartbeat);
-- a row whose last_seen_at is too old is an unhealthy node, listed until removed (DELETE /api/cluster/nodes/{id}).
CREATE TABLE cluster_nodes (
  node_id      TEXT PRIMARY KEY,
  url          TEXT NOT NULL,
  version      TEXT NOT NULL,
  started_at   TEXT NOT NULL,
  last_seen_at TEXT NOT NULL
);
