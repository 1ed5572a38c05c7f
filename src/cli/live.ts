import type { DaemonClient } from './client.js';
import type { LiveMessage } from './types.js';

export type FeedState = 'connecting' | 'open' | 'reconnecting' | 'closed';

/** The live channel as the TUIs and `router logs -f` consume it. */
export interface LiveFeed {
  close(): void;
}

export interface LiveHandlers {
  onMessage: (message: LiveMessage) => void;
  onState?: (state: FeedState, detail?: string) => void;
}

/** Waits between reconnection attempts: quick at first, then every five seconds (never a busy loop). */
const BACKOFF_MS = [500, 1_000, 2_000, 5_000];

/**
 * Opens the daemon's live WebSocket (`GET /api/live`) with the CLI token and keeps it open: when the
 * daemon restarts, it reconnects with backoff. The WebSocket client (undici) is loaded here, on first
 * use, so plain commands never pay for it. Messages that are not JSON objects with a known `type` are
 * ignored.
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
  let socket: InstanceType<typeof WebSocket> | undefined;
  let timer: NodeJS.Timeout | undefined;

  const connect = () => {
    if (closed) return;
    handlers.onState?.(attempt === 0 ? 'connecting' : 'reconnecting');
    const ws = new WebSocket(wsUrl, { headers });
    socket = ws;
    ws.addEventListener('open', () => {
      attempt = 0;
      handlers.onState?.('open');
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
      if (type === 'request' || type === 'status') handlers.onMessage(msg as LiveMessage);
    });
    ws.addEventListener('close', (ev) => {
      if (closed) return;
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
      try {
        socket?.close();
      } catch {
        // already closing
      }
      handlers.onState?.('closed');
    },
  };
}
