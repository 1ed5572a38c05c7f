import type { ClusterNode } from '../../shared/cluster.js';
import type { SqlDriver } from '../store/driver.js';

/**
 * The node registry of cluster mode (table `cluster_nodes`, migrations/pg/0050_cluster.sql): every node
 * upserts its row at start and every `HEARTBEAT_MS`; a node not seen for `STALE_MS` is listed with
 * `healthy: false` until someone removes it (DELETE /api/cluster/nodes/{id}, `router cluster remove-node`).
 * A killed node is so noticed within STALE_MS + HEARTBEAT_MS (20 s; the promise is 30 s).
 */

/** How often a node records that it is alive. */
export const HEARTBEAT_MS = 5_000;
/** A node not seen for this long is unhealthy. */
export const STALE_MS = 15_000;

export interface NodeRow {
  nodeId: string;
  url: string;
  version: string;
  startedAt: string;
  lastSeenAt: string;
}

/** The registry's storage port. */
export interface NodeRegistryRepository {
  /** Records a node alive now (inserted, or its url, version and times updated). */
  upsert(node: NodeRow): Promise<void>;
  list(): Promise<NodeRow[]>;
  /** False when there was no such node. */
  remove(nodeId: string): Promise<boolean>;
}

interface Row {
  node_id: string;
  url: string;
  version: string;
  started_at: string;
  last_seen_at: string;
}

/** The registry over the driver seam (PostgreSQL in cluster mode; one machine has no registry). */
export class SqlNodeRegistry implements NodeRegistryRepository {
  constructor(private readonly driver: SqlDriver) {}

  async upsert(n: NodeRow): Promise<void> {
    await this.driver.run(
      `INSERT INTO cluster_nodes (node_id, url, version, started_at, last_seen_at) VALUES (?, ?, ?, ?, ?)
       ON CONFLICT (node_id) DO UPDATE SET url = excluded.url, version = excluded.version, started_at = excluded.started_at, last_seen_at = excluded.last_seen_at`,
      [n.nodeId, n.url, n.version, n.startedAt, n.lastSeenAt],
    );
  }

  async list(): Promise<NodeRow[]> {
    const rows = await this.driver.query<Row>('SELECT node_id, url, version, started_at, last_seen_at FROM cluster_nodes ORDER BY node_id');
    return rows.map((r) => ({ nodeId: r.node_id, url: r.url, version: r.version, startedAt: r.started_at, lastSeenAt: r.last_seen_at }));
  }

  async remove(nodeId: string): Promise<boolean> {
    return (await this.driver.run('DELETE FROM cluster_nodes WHERE node_id = ?', [nodeId])).changes > 0;
  }
}

/** Whether a node seen last at `lastSeenAt` counts as alive at `now`. */
export function isHealthy(lastSeenAt: string, now = Date.now()): boolean {
  return now - Date.parse(lastSeenAt) < STALE_MS;
}

/**
 * This node's side of the registry: its heartbeat, and the last list it read (shown while the database is
 * down, so GET /api/cluster keeps answering).
 */
export class NodeRegistry {
  private timer: NodeJS.Timeout | undefined;
  private last: NodeRow[] = [];
  private readonly startedAt = new Date().toISOString();

  constructor(
    private readonly repo: NodeRegistryRepository,
    private readonly self: () => { nodeId: string; url: string; version: string },
    private readonly onError: (err: unknown) => void = () => {},
  ) {}

  /** Records this node now and every HEARTBEAT_MS (call once the node listens: its url is known then). */
  async start(intervalMs = HEARTBEAT_MS): Promise<void> {
    await this.beat();
    this.timer = setInterval(() => void this.beat(), intervalMs);
    this.timer.unref();
  }

  private async beat(): Promise<void> {
    try {
      await this.repo.upsert({ ...this.self(), startedAt: this.startedAt, lastSeenAt: new Date().toISOString() });
      this.last = await this.repo.list();
    } catch (err) {
      this.onError(err);
    }
  }

  /** Every known node with its health; read afresh, or the last list read when the database is down. */
  async nodes(): Promise<ClusterNode[]> {
    try {
      this.last = await this.repo.list();
    } catch (err) {
      // the database is down: the last list read, health judged from its times
      this.onError(err);
    }
    const now = Date.now();
    return this.last.map((n) => ({ nodeId: n.nodeId, url: n.url, version: n.version, lastSeenAt: n.lastSeenAt, healthy: isHealthy(n.lastSeenAt, now) }));
  }

  /** Removes a node's row (the caller refuses a healthy one). */
  remove(nodeId: string): Promise<boolean> {
    return this.repo.remove(nodeId).then((removed) => {
      this.last = this.last.filter((n) => n.nodeId !== nodeId);
      return removed;
    });
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
  }
}
