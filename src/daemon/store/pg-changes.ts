import type pg from 'pg';
import type { ChangeFeed } from './changes.js';
import type { PostgresDriver } from './postgres-driver.js';

/** The NOTIFY channel of change notices (one per database: one cluster). */
export const CHANGES_CHANNEL = 'router_changes';

/** Wait before reconnecting the listening connection: doubles from the first to the last. */
const RECONNECT_MS = [100, 250, 500, 1000, 2000];

export interface PostgresChangeFeedOptions {
  driver: PostgresDriver;
  /** This node: notices it published itself are ignored. */
  nodeId: string;
  /** A subscriber's reload failed, or the listening connection was lost (logged by the caller). */
  onError?: (what: string, err: unknown) => void;
  /** The listening connection is up (true) or lost (false). */
  onConnection?: (up: boolean, err?: unknown) => void;
}

interface Notice {
  from: string;
  topic: string;
}

/**
 * Change notices between the nodes of a cluster over PostgreSQL LISTEN/NOTIFY (store/changes.ts). Each node
 * holds one dedicated connection listening on `router_changes`; `publish(topic)` sends `pg_notify` with
 * `{from, topic}` through the pool after the write committed, and every other node calls that topic's
 * subscribers (their stores' `reload()`). A node ignores its own notices.
 *
 * The listening connection reconnects by itself (100 ms doubling to 2 s). Notices sent while it was down are
 * lost, so after a reconnect every subscriber is called once: each module reloads what it may have missed.
 * Reloads of one topic never overlap: a notice during a reload runs one more reload after it (newer notices
 * are coalesced), so a slow earlier reload cannot install an older snapshot after a newer one.
 */
export class PostgresChangeFeed implements ChangeFeed {
  private readonly subscribers = new Map<string, Set<() => void | Promise<void>>>();
  private readonly running = new Map<string, Promise<void>>();
  private readonly pending = new Set<string>();
  private client: pg.Client | undefined;
  private attempt = 0;
  private timer: NodeJS.Timeout | undefined;
  private closed = false;
  private up = false;

  constructor(private readonly opts: PostgresChangeFeedOptions) {}

  /** Opens the listening connection; a failure is reported (onConnection) and retried in the background. */
  async start(): Promise<void> {
    try {
      await this.connect();
    } catch (err) {
      this.opts.onConnection?.(false, err);
      this.scheduleReconnect();
    }
  }

  /** Whether the listening connection is up. */
  connected(): boolean {
    return this.up;
  }

  publish(topic: string): void {
    if (this.closed) return;
    const payload = JSON.stringify({ from: this.opts.nodeId, topic } satisfies Notice);
    this.opts.driver.query('SELECT pg_notify(?, ?)', [CHANGES_CHANNEL, payload]).catch((err: unknown) => this.opts.onError?.(`publish ${topic}`, err));
  }

  subscribe(topic: string, fn: () => void | Promise<void>): () => void {
    let set = this.subscribers.get(topic);
    if (!set) this.subscribers.set(topic, (set = new Set()));
    set.add(fn);
    return () => set.delete(fn);
  }

  /** Calls a topic's subscribers; a notice while they run queues one more round. Resolves when done. */
  dispatch(topic: string): Promise<void> {
    const current = this.running.get(topic);
    if (current) {
      this.pending.add(topic);
      return current;
    }
    const run = (async () => {
      do {
        this.pending.delete(topic);
        for (const fn of this.subscribers.get(topic) ?? []) {
          try {
            await fn();
          } catch (err) {
            this.opts.onError?.(`reload ${topic}`, err);
          }
        }
      } while (this.pending.has(topic) && !this.closed);
    })().finally(() => this.running.delete(topic));
    this.running.set(topic, run);
    return run;
  }

  /** Every topic's subscribers, once (after a reconnect). */
  dispatchAll(): Promise<void> {
    return Promise.all([...this.subscribers.keys()].map((t) => this.dispatch(t))).then(() => undefined);
  }

  private async connect(): Promise<void> {
    const client = this.opts.driver.dedicatedClient();
    client.on('error', (err) => this.lost(client, err));
    client.on('end', () => this.lost(client));
    client.on('notification', (msg) => {
      if (msg.channel !== CHANGES_CHANNEL || !msg.payload) return;
      let notice: Notice;
      try {
        notice = JSON.parse(msg.payload) as Notice;
      } catch {
        return;
      }
      if (notice.from === this.opts.nodeId || typeof notice.topic !== 'string') return;
      void this.dispatch(notice.topic);
    });
    try {
      await client.connect();
      await client.query(`LISTEN ${CHANGES_CHANNEL}`);
    } catch (err) {
      client.removeAllListeners('end');
      await client.end().catch(() => undefined);
      throw err;
    }
    if (this.closed) {
      await client.end().catch(() => undefined);
      return;
    }
    const reconnected = this.attempt > 0;
    this.client = client;
    this.attempt = 0;
    this.up = true;
    this.opts.onConnection?.(true);
    // Notices sent while the connection was down are lost: every module reloads once.
    if (reconnected) void this.dispatchAll();
  }

  private lost(client: pg.Client, err?: unknown): void {
    if (this.client !== client || this.closed) return;
    this.client = undefined;
    this.up = false;
    client.removeAllListeners('notification');
    client.end().catch(() => undefined);
    this.opts.onConnection?.(false, err);
    this.scheduleReconnect();
  }

  private scheduleReconnect(): void {
    if (this.closed || this.timer) return;
    const wait = RECONNECT_MS[Math.min(this.attempt, RECONNECT_MS.length - 1)]!;
    this.attempt += 1;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.connect().catch(() => this.scheduleReconnect());
    }, wait);
    this.timer.unref();
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    const client = this.client;
    this.client = undefined;
    this.up = false;
    await client?.end().catch(() => undefined);
  }
}
