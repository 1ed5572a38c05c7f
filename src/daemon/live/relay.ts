/**
 * The live feed across a cluster (issue 29 item 4: "the live feed of any node covers all nodes within 2 s").
 * Every node's live frames (recorded requests, events) travel on the hot state's pub/sub (Redis), so a
 * dashboard connected to any node sees the traffic of all of them.
 *
 * Nothing is published while nobody watches: a node with live clients announces `watch` on connect and
 * every status tick (2 s); the others relay their frames only while an announcement younger than
 * {@link WATCH_TTL_MS} is in hand. Frames are batched for {@link FLUSH_MS} into one message, so a busy node
 * publishes at most ten messages a second however many requests it serves; the request path only appends
 * the frame to an array. On one machine (the in-process hot state) no relay exists at all.
 */
import type { HotMessage, HotState } from '../hot/port.js';

export const LIVE_CHANNEL = 'live';
/** A `watch` announcement holds this long (announced every 2 s while a client is connected). */
export const WATCH_TTL_MS = 5_000;
/** Frames wait at most this long before they are published together. */
export const FLUSH_MS = 100;
/** Frames of one message at most; more in one flush interval are dropped (and counted). */
export const MAX_BATCH = 1_000;

type Frame = Record<string, unknown>;

export class LiveRelay {
  private watchedUntil = 0;
  private outbox: Frame[] = [];
  private timer?: NodeJS.Timeout;
  private readonly unsubscribe: () => void;
  /** Frames not relayed because a flush interval held more than MAX_BATCH. */
  dropped = 0;

  /** `deliver` hands another node's frame to this node's live clients. */
  constructor(
    private readonly hot: HotState,
    private readonly deliver: (frame: Frame) => void,
    private readonly now: () => number = Date.now,
  ) {
    this.unsubscribe = hot.subscribe(LIVE_CHANNEL, (m) => this.receive(m));
  }

  /** True while another node has live clients: this node's frames are worth publishing. */
  get watched(): boolean {
    return this.now() < this.watchedUntil;
  }

  /** Tells the other nodes that this node has live clients (called on connect and every status tick). */
  announce(): void {
    this.hot.publish(LIVE_CHANNEL, { kind: 'watch' });
  }

  /** Queues one of this node's frames for the other nodes' clients (no-op while nobody else watches). */
  send(frame: Frame): void {
    if (!this.watched) return;
    if (this.outbox.length >= MAX_BATCH) {
      this.dropped += 1;
      return;
    }
    this.outbox.push(frame);
    if (!this.timer) {
      this.timer = setTimeout(() => this.flush(), FLUSH_MS);
      this.timer.unref();
    }
  }

  close(): void {
    this.unsubscribe();
    clearTimeout(this.timer);
    this.timer = undefined;
    this.outbox = [];
  }

  private flush(): void {
    this.timer = undefined;
    if (this.outbox.length === 0) return;
    const frames = this.outbox;
    this.outbox = [];
    this.hot.publish(LIVE_CHANNEL, { kind: 'frames', frames });
  }

  private receive(m: HotMessage): void {
    if (m.kind === 'watch') {
      this.watchedUntil = this.now() + WATCH_TTL_MS;
      return;
    }
    if (m.kind !== 'frames' || !Array.isArray(m.frames)) return;
    for (const f of m.frames as unknown[]) {
      if (f && typeof f === 'object' && !Array.isArray(f) && typeof (f as Frame).type === 'string') this.deliver(f as Frame);
    }
  }
}
