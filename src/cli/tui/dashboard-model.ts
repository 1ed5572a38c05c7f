/**
 * The dashboard's data, kept outside React for the whole TUI session: the views the dashboard opens
 * (logs, usage, inspect) replace it on the screen, but its sparklines, "last minute" counts, per-provider
 * traffic and recent errors keep accumulating, and are there when Esc comes back.
 *
 * What it reads: the live channel (requests, status every 2 s); `/api/resilience` every 5 s;
 * `/api/providers`, `/api/combos`, `/api/system/status` every 30 s, and at once after the live channel
 * reconnects (a restarted daemon has a new pid); the last two minutes of `/api/logs` when it starts, so
 * the counts do not begin at zero. Requests are counted once (live and log copies matched by key).
 */
import type { StatusReply } from '../../shared/wire.js';
import { entryKey, SeenSet } from '../live.js';
import type { ComboRecord, LiveStatus, LogEntry, PublicConnection, RequestEntry, ResilienceReply } from '../types.js';
import type { FeedState, TuiSource } from './source.js';
import { addThroughput, type Throughput } from './state.js';

export const POLL = { resilienceMs: 5_000, configMs: 30_000 };

/** How far back the dashboard reads the request log when it starts (the sparkline spans two minutes). */
const HISTORY_MS = 120_000;

export interface DashboardData {
  status?: StatusReply;
  live?: LiveStatus;
  connections: PublicConnection[];
  combos: ComboRecord[];
  resilience?: ResilienceReply;
  traffic: Map<string, { requests: number; errors: number }>;
  throughput: Throughput;
  errors: RequestEntry[];
  problem?: string;
  feed: { state: FeedState; detail?: string };
}

export class DashboardModel {
  data: DashboardData = { connections: [], combos: [], traffic: new Map(), throughput: { seconds: new Map() }, errors: [], feed: { state: 'connecting' } };
  private readonly listeners = new Set<() => void>();
  private readonly seen = new SeenSet();
  private readonly timers: NodeJS.Timeout[] = [];
  private readonly unsubscribe: () => void;

  constructor(
    private readonly source: TuiSource,
    now: () => number = Date.now,
  ) {
    this.unsubscribe = source.subscribe(
      (m) => (m.type === 'status' ? this.set({ live: m }) : this.ingest(m)),
      (state, detail, reconnected) => {
        this.set({ feed: { state, detail } });
        if (reconnected) void this.loadConfig();
      },
    );
    void this.loadConfig();
    void this.loadResilience();
    this.timers.push(setInterval(() => void this.loadConfig(), POLL.configMs), setInterval(() => void this.loadResilience(), POLL.resilienceMs));
    void source
      .get<{ logs: LogEntry[] }>(`/api/logs?from=${now() - HISTORY_MS}&limit=500`)
      .then((r) => [...r.logs].reverse().forEach((e) => this.ingest({ ...e, type: 'request' })))
      .catch(() => {
        // an older daemon or a hiccup: the counts start with this session instead
      });
  }

  /** Counts one request (once, whichever copy arrives first). */
  private ingest(e: RequestEntry): void {
    if (!this.seen.add(entryKey(e))) return;
    const d = this.data;
    const traffic = new Map(d.traffic);
    const cur = traffic.get(e.provider) ?? { requests: 0, errors: 0 };
    traffic.set(e.provider, { requests: cur.requests + 1, errors: cur.errors + (e.status >= 400 ? 1 : 0) });
    this.set({ throughput: addThroughput(d.throughput, e), traffic, errors: e.status >= 400 ? [...d.errors.slice(-19), e] : d.errors });
  }

  private guard(p: Promise<unknown>): Promise<void> {
    return p.then(
      () => this.set({ problem: undefined }),
      (err: Error) => this.set({ problem: err.message }),
    );
  }

  loadConfig(): Promise<void> {
    return this.guard(
      Promise.all([
        this.source.get<StatusReply>('/api/system/status').then((status) => this.set({ status })),
        this.source.get<{ connections: PublicConnection[] }>('/api/providers').then((r) => this.set({ connections: r.connections })),
        this.source.get<{ combos: ComboRecord[] }>('/api/combos').then((r) => this.set({ combos: r.combos })),
      ]),
    );
  }

  loadResilience(): Promise<void> {
    return this.guard(this.source.get<ResilienceReply>('/api/resilience').then((resilience) => this.set({ resilience })));
  }

  private set(patch: Partial<DashboardData>): void {
    this.data = { ...this.data, ...patch };
    for (const l of this.listeners) l();
  }

  /** For useSyncExternalStore. */
  subscribe = (listener: () => void): (() => void) => {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  };

  snapshot = (): DashboardData => this.data;

  dispose(): void {
    this.unsubscribe();
    for (const t of this.timers) clearInterval(t);
    this.listeners.clear();
  }
}
