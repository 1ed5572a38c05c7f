import { useEffect, useState } from 'react';
import type { LogEntry } from './replies';

/** The `status` message of /api/live (docs/events.md). */
export interface LiveStatus {
  timestamp: string;
  version: string;
  uptimeSeconds: number;
  requestsPerSecond: number;
  inFlight: number;
  openStreams: number;
  liveClients: number;
}
export type LiveRequest = Omit<LogEntry, 'id'>;

type Listener = { status?: (s: LiveStatus) => void; request?: (r: LiveRequest) => void; state?: (connected: boolean) => void };
const listeners = new Set<Listener>();
let socket: WebSocket | undefined;
let connected = false;
let lastStatus: LiveStatus | undefined;
let retry: ReturnType<typeof setTimeout> | undefined;
let delay = 1000;

function setConnected(v: boolean): void {
  connected = v;
  for (const l of listeners) l.state?.(v);
}

function open(): void {
  if (socket || listeners.size === 0) return;
  const ws = new WebSocket(`${location.protocol === 'https:' ? 'wss' : 'ws'}://${location.host}/api/live`);
  socket = ws;
  ws.onopen = () => {
    delay = 1000;
    setConnected(true);
  };
  ws.onmessage = (m) => {
    let msg: { type?: string };
    try {
      msg = JSON.parse(String(m.data));
    } catch {
      return;
    }
    if (msg.type === 'status') {
      lastStatus = msg as unknown as LiveStatus;
      for (const l of listeners) l.status?.(lastStatus);
    } else if (msg.type === 'request') {
      for (const l of listeners) l.request?.(msg as unknown as LiveRequest);
    }
  };
  ws.onclose = () => {
    socket = undefined;
    setConnected(false);
    if (listeners.size > 0) {
      retry = setTimeout(open, delay);
      delay = Math.min(delay * 2, 15_000);
    }
  };
}

/** Closes the live socket (logout). */
export function closeLive(): void {
  clearTimeout(retry);
  socket?.close();
  socket = undefined;
}

/** Subscribes to the live channel while the component is mounted; one socket shared by every subscriber. */
export function useLive(handlers: Omit<Listener, 'state'>): { connected: boolean; status?: LiveStatus } {
  const [state, setState] = useState({ connected, status: lastStatus });
  useEffect(() => {
    const l: Listener = {
      status: (s) => {
        handlers.status?.(s);
        setState({ connected: true, status: s });
      },
      request: (r) => handlers.request?.(r),
      state: (c) => setState((prev) => ({ ...prev, connected: c })),
    };
    listeners.add(l);
    open();
    return () => {
      listeners.delete(l);
    };
  }, []);
  return state;
}
