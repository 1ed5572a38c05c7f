import type { DaemonClient } from './client.js';
import type { LiveMessage, LiveRequest, LogEntry, RequestEntry } from './types.js';

export type FeedState = 'connecting' | 'open' | 'reconnecting' | 'closed';

/** The live channel as the TUIs and `router logs -f` consume it. */
export interface LiveFeed {
  close(): void;
}

export interface LiveHandlers {
  onMessage: (message: LiveMessage) => void;
  /** `reconnected` is true on an `open` that follows a lost connection (a daemon restart, say). */
  onState?: (state: FeedState, detail?: string, reconnected?: boolean) => void;
}

/** Identity of a request attempt across the log and the live channel (the log adds an id, live does not). */
export function entryKey(e: RequestEntry): string {
  return `${e.traceId}|${e.timestamp}|${e.provider}|${e.model}|${e.status}`;
}

/** Keys of requests already delivered, bounded (oldest forgotten first). */
export class SeenSet {
  private readonly keys = new Set<string>();
  constructor(private readonly max = 5_000) {}
  /** Adds a key; false when it was there already. */
  add(key: string): boolean {
    if (this.keys.has(key)) return false;
    this.keys.add(key);
    if (this.keys.size > this.max) this.keys.delete(this.keys.values().next().value!);
    return true;
  }
}

/** Rows of the usage log written in batches (about every second): a second backfill finds late ones. */
const LATE_BACKFILL_MS = 2_500;
/** Margin before the last request seen: a request in transit when the socket dropped is fetched too. */
const BACKFILL_MARGIN_MS = 5_000;

/** Waits between reconnection attempts: quick at first, then every five seconds (never a busy loop). */
const BACKOFF_MS = [500, 1_000, 2_000, 5_000];

/**
 * Opens the daemon's live WebSocket (`GET /api/live`) with the CLI token and keeps it open: when the
 * daemon restarts, it reconnects with backoff. The WebSocket client (undici) is loaded here, on first
 * use, so plain commands never pay for it. Messages that are not JSON objects with a known `type` are
 * ignored.
 *
 * No request is missed across a reconnect: once the socket is open again, the requests recorded since
 * the last one seen (minus a margin) are read from `/api/logs` and delivered as `request` messages,
 * oldest first, and again a moment later for rows the daemon had not written yet. Every request is
 * delivered once (live and log copies are matched by `entryKey`).
 */
export async function openLive(client: DaemonClient, handlers: LiveHandlers): Promise<LiveFeed> {
  const { WebSocket } = await import('undici');
  const httpUrl = new URL(client.url);
  const wsUrl = `ws://${httpUrl.host}/api/live`;
  // The daemon accepts a loopback dashboard origin of its port on every bind, and no Origin on loopback
  // binds only; sending its own origin works for both.
  const headers = { ...client.authHeaders(), origin: `http://127.0.0.1:${httpUrl.port}` };
  let closed = false;
  let attempt = 0;
  let everOpen = false;
  let lastRequestMs: number | undefined;
  let droppedAt = Date.now();
  const seen = new SeenSet();
  const backfillTimers = new Set<NodeJS.Timeout>();

  const deliver = (m: LiveMessage) => {
    if (m.type === 'request') {
      if (!seen.add(entryKey(m))) return;
      const t = Date.parse(m.timestamp);
      if (lastRequestMs === undefined || t > lastRequestMs) lastRequestMs = t;
    }
    handlers.onMessage(m);
  };
  const backfill = async (from: number) => {
    if (closed) return;
    try {
      // The newest 500 of the gap at most: a TUI holds fewer, and a gap that busy is summarized by usage.
      const { logs } = await client.request<{ logs: LogEntry[] }>('GET', `/api/logs?from=${from}&limit=500`, undefined, 5_000);
      for (const { id: _id, ...e } of [...logs].reverse()) if (!closed) deliver({ type: 'request', ...e } as LiveRequest);
    } catch {
      // the daemon went away again; the next reconnect backfills
    }
  };
  const backfillSince = () => {
    const from = (lastRequestMs ?? droppedAt) - BACKFILL_MARGIN_MS;
    void backfill(from);
    const t = setTimeout(() => {
      backfillTimers.delete(t);
      void backfill(from);
    }, LATE_BACKFILL_MS);
    t.unref();
    backfillTimers.add(t);
  };
  let socket: InstanceType<typeof WebSocket> | undefined;
  let timer: NodeJS.Timeout | undefined;

  const connect = () => {
    if (closed) return;
    handlers.onState?.(attempt === 0 ? 'connecting' : 'reconnecting');
    const ws = new WebSocket(wsUrl, { headers });
    socket = ws;
    ws.addEventListener('open', () => {
      attempt = 0;
      const reconnected = everOpen;
      everOpen = true;
      handlers.onState?.('open', undefined, reconnected);
      if (reconnected) backfillSince();
    });
    ws.addEventListener('message', (ev) => {
      if (typeof ev.data !== 'string') return;
      let msg: unknown;
      try {
        msg = JSON.parse(ev.data);
      } catch {
        return;
      }
      const type = (msg as { type?: unknown })?.type;
      if (type === 'request' || type === 'status') deliver(msg as LiveMessage);
    });
    ws.addEventListener('close', (ev) => {
      if (closed) return;
      if (attempt === 0) droppedAt = Date.now();
      const wait = BACKOFF_MS[Math.min(attempt, BACKOFF_MS.length - 1)]!;
      attempt++;
      handlers.onState?.('reconnecting', ev.reason || `the live channel closed (code ${ev.code}); retrying`);
      timer = setTimeout(connect, wait);
    });
    // An error is always followed by close, which schedules the retry.
    ws.addEventListener('error', () => {});
  };
  connect();
  return {
    close() {
      if (closed) return;
      closed = true;
      clearTimeout(timer);
      for (const t of backfillTimers) clearTimeout(t);
      try {
        socket?.close();
      } catch {
        // already closing
      }
      handlers.onState?.('closed');
    },
  };
}
