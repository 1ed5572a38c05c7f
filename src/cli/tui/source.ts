import type { DaemonClient } from '../client.js';
import { openLive, type FeedState, type LiveFeed } from '../live.js';
import type { LiveMessage } from '../types.js';

export type { FeedState };

/**
 * Everything a TUI view reads: management routes and the live channel. Views take this interface, so
 * tests hand them a fake and feed messages by hand.
 */
export interface TuiSource {
  get<T>(path: string): Promise<T>;
  post<T>(path: string, body?: unknown): Promise<T>;
  /** Receives live messages until the returned function is called. */
  subscribe(onMessage: (m: LiveMessage) => void, onState?: (s: FeedState, detail?: string, reconnected?: boolean) => void): () => void;
  /** The daemon's URL (shown in headers). */
  url: string;
}

/**
 * The real source: one DaemonClient and one WebSocket shared by every view of the session (switching
 * views does not reconnect). The socket opens on the first subscription and closes with `close()`.
 * After a reconnect the live layer backfills from `/api/logs` (src/cli/live.ts), so views miss nothing.
 */
export class DaemonSource implements TuiSource {
  private feed?: Promise<LiveFeed>;
  private readonly listeners = new Set<(m: LiveMessage) => void>();
  private readonly stateListeners = new Set<(s: FeedState, detail?: string, reconnected?: boolean) => void>();
  private state: { s: FeedState; detail?: string } = { s: 'connecting' };

  constructor(private readonly client: DaemonClient) {}

  get url(): string {
    return this.client.url;
  }

  get<T>(path: string): Promise<T> {
    return this.client.request<T>('GET', path);
  }

  post<T>(path: string, body?: unknown): Promise<T> {
    return this.client.request<T>('POST', path, body ?? {});
  }

  subscribe(onMessage: (m: LiveMessage) => void, onState?: (s: FeedState, detail?: string, reconnected?: boolean) => void): () => void {
    this.listeners.add(onMessage);
    if (onState) {
      this.stateListeners.add(onState);
      onState(this.state.s, this.state.detail);
    }
    this.feed ??= openLive(this.client, {
      onMessage: (m) => {
        for (const l of this.listeners) l(m);
      },
      onState: (s, detail, reconnected) => {
        this.state = { s, detail };
        for (const l of this.stateListeners) l(s, detail, reconnected);
      },
    });
    return () => {
      this.listeners.delete(onMessage);
      if (onState) this.stateListeners.delete(onState);
    };
  }

  async close(): Promise<void> {
    const feed = this.feed;
    this.feed = undefined;
    (await feed)?.close();
  }
}
