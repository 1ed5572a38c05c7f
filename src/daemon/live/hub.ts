import type { Duplex } from 'node:stream';
import type { HotState } from '../hot/port.js';
import type { Logger } from '../logger.js';
import { publicRecord, type UsageRecord } from '../usage/record.js';
import { entryNames, type NameSources } from '../usage/names.js';
import type { UsageService } from '../usage/service.js';
import { LiveRelay } from './relay.js';
import { acceptValue, WsConnection } from './websocket.js';

/** Seconds between status messages. */
export const STATUS_INTERVAL_MS = 2_000;
/** Live connections at most; later upgrades are refused with 503. */
export const MAX_LIVE_CLIENTS = 64;

export interface LiveHubOptions {
  usage: UsageService;
  log: Logger;
  /** A recorded request's names: provider as people read it (a node's prefix), key and connection names. */
  names?: NameSources;
  /** Unix ms when the daemon started. */
  startedAt: number;
  version: string;
  statusIntervalMs?: number;
  /**
   * The hot state: when it is shared (cluster mode, Redis), frames travel between the nodes (live/relay.ts)
   * and carry `nodeId`; otherwise the feed is this daemon's alone, exactly as on one machine.
   */
  hot?: HotState;
}

/**
 * The live dashboard channel: every connected client receives `{type:'request', ...}` for each recorded
 * proxied attempt and `{type:'status', ...}` on connect and every two seconds. Messages are serialized
 * once per broadcast; nothing runs while no client is connected.
 */
export class LiveHub {
  private readonly clients = new Set<WsConnection>();
  private timer?: NodeJS.Timeout;
  private unsubscribe?: () => void;
  private closed = false;
  private readonly relay?: LiveRelay;
  private readonly untap?: () => void;

  constructor(private readonly opts: LiveHubOptions) {
    const hot = opts.hot;
    if (!hot?.shared) return;
    this.relay = new LiveRelay(hot, (frame) => this.broadcast(frame));
    // In a cluster other nodes' clients may watch while this node has none: records are tapped for good,
    // and the tap returns at once while nobody watches anywhere.
    this.untap = opts.usage.onRecord((rec: UsageRecord) => {
      if (this.clients.size === 0 && !this.relay!.watched) return;
      this.share(this.requestMessage(rec));
    });
  }

  get size(): number {
    return this.clients.size;
  }

  /** True while a new client may be accepted. */
  get accepting(): boolean {
    return !this.closed && this.clients.size < MAX_LIVE_CLIENTS;
  }

  /** Completes the handshake on an authorized upgrade and starts broadcasting to the client. */
  accept(socket: Duplex, head: Buffer, key: string, version: string): void {
    if (!this.accepting) {
      socket.destroy();
      return;
    }
    socket.write(
      'HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n' +
        `Sec-WebSocket-Accept: ${acceptValue(key)}\r\nX-Router-Version: ${version}\r\n\r\n`,
    );
    const conn = new WsConnection(socket, head, (c) => this.remove(c));
    this.clients.add(conn);
    if (this.clients.size === 1) this.start();
    conn.send(JSON.stringify(this.status()));
  }

  /** The periodic status message. */
  status(): Record<string, unknown> {
    const usage = this.opts.usage;
    const stats = usage.stats();
    return {
      type: 'status',
      timestamp: new Date().toISOString(),
      version: this.opts.version,
      uptimeSeconds: Math.floor((Date.now() - this.opts.startedAt) / 1000),
      requestsPerSecond: usage.requestsPerSecond(),
      inFlight: usage.inflight.count,
      openStreams: usage.inflight.openStreams(),
      liveClients: this.clients.size,
      usageQueue: { queued: stats.queued, dropped: stats.dropped, estimating: stats.estimating },
    };
  }

  /** Sends one message to every client. */
  broadcast(message: Record<string, unknown>): void {
    if (this.clients.size === 0) return;
    const text = JSON.stringify(message);
    for (const c of this.clients) c.send(text);
  }

  /** Sends a frame to this node's clients and, in a cluster, to every other node's (request and event frames). */
  share(message: Record<string, unknown>): void {
    if (!this.relay) return this.broadcast(message);
    const framed = { ...message, nodeId: this.opts.hot!.nodeId };
    this.broadcast(framed);
    this.relay.send(framed);
  }

  /** Closes every connection (1001 going away) and stops the timer; further upgrades are refused. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.untap?.();
    this.relay?.close();
    for (const c of [...this.clients]) c.close(1001, 'server shutting down');
    this.stop();
  }

  /** A recorded request as the live channel sends it, with names next to ids. */
  private requestMessage(rec: UsageRecord): Record<string, unknown> {
    const names = this.opts.names;
    const entry = publicRecord(rec, names?.label ?? String);
    return { type: 'request', ...entry, ...(names ? entryNames(names, entry) : {}) };
  }

  private start(): void {
    const relay = this.relay;
    if (relay) relay.announce();
    else this.unsubscribe = this.opts.usage.onRecord((rec: UsageRecord) => this.broadcast(this.requestMessage(rec)));
    this.timer = setInterval(() => {
      this.broadcast(this.status());
      relay?.announce();
    }, this.opts.statusIntervalMs ?? STATUS_INTERVAL_MS);
    this.timer.unref();
  }

  private stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
    this.unsubscribe?.();
    this.unsubscribe = undefined;
  }

  private remove(conn: WsConnection): void {
    this.clients.delete(conn);
    if (this.clients.size === 0) this.stop();
  }
}
