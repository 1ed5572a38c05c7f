import type { HotHealth } from '../hot/port.js';
import { collectDefaultMetrics, Registry } from 'prom-client';
import type { ConnectionStore } from '../providers/connections.js';
import type { Resilience } from '../resilience/service.js';
import type { UsageRecord } from '../usage/record.js';
import type { UsageService } from '../usage/service.js';
import { HistogramFamily, observe, ValueFamily, type Cell, type HistogramCell } from './families.js';
import { CappedLabel, OTHER, statusClass } from './labels.js';

/** Models kept as labels before the rest count under "other" (also combos and providers, each its own cap). */
export const MAX_MODEL_LABELS = 100;
const MAX_OTHER_LABELS = 100;
/** Cached models (and combinations per model) of the record path; past this the cache restarts (cells stay in their families). */
const MAX_SERIES_CACHE = 5_000;
const MAX_SERIES_PER_MODEL = 64;

/** Seconds; whole requests and upstream waits (LLM replies take from tens of ms to minutes). */
const DURATION_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300];
/** Seconds; router's own time per request (Server-Timing `router`): tens of microseconds to a few ms. */
const OVERHEAD_BUCKETS = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1];
const TOKEN_KINDS = ['input', 'output', 'cache_read', 'cache_write', 'reasoning'] as const;

export interface MetricsSources {
  usage: UsageService;
  resilience: Resilience;
  connections: ConnectionStore;
  /** A provider id as people read it (a node's prefix). */
  label: (providerId: string) => string;
  version: string;
  /** Spans the trace exporter dropped (queue full, collector down); absent without tracing. */
  spansDropped?: () => number;
  /** Whether the provider's model list knows this model (a refused request to it still earns its label). */
  knownModel?: (providerId: string, model: string) => boolean;
  /** Health of the hot shared state (Redis in cluster mode); absent: no gauges. */
  hot?: () => HotHealth;
  /** Health of the shared database (PostgreSQL in cluster mode); absent on one machine: no gauges. */
  database?: () => { healthy: boolean; latencyMs: number | null };
}

/** The cells one usage record adds to, looked up once per label combination (the record's raw fields). */
interface Series {
  endpoint: string;
  clientFormat: string | null;
  provider: string;
  combo: string | null;
  status: number;
  /** Counted under "other" because the model had not earned a label yet (see `modelLabel`). */
  other: boolean;
  requests: Cell;
  duration: HistogramCell;
  upstream: HistogramCell;
  tokens: Cell[];
  cost: Cell;
}

/**
 * Prometheus metrics of the daemon. Traffic is counted from what already exists: every usage record (the
 * usage service's record listener), the Server-Timing figures as they are computed, and classified upstream
 * failures; breakers, cooldowns, in-flight requests and the usage queue are read at scrape time. Recording
 * is a cached lookup and a few additions; nothing is formatted until `/metrics` is asked.
 */
export class Metrics {
  readonly registry = new Registry();
  private readonly models: CappedLabel;
  private readonly combos = new CappedLabel(MAX_OTHER_LABELS);
  private readonly providers = new CappedLabel(MAX_OTHER_LABELS);
  private readonly routes = new CappedLabel(MAX_OTHER_LABELS);
  /** Series by the record's model, then a short list compared field by field (no key string per record). */
  private readonly series = new Map<string, Series[]>();
  /** Server-Timing cells by provider id: [json replies, streams]. */
  private readonly timingCells = [new Map<string, { overhead: HistogramCell; ttfb: HistogramCell | undefined }>(), new Map<string, { overhead: HistogramCell; ttfb: HistogramCell | undefined }>()] as const;
  private readonly errorCells = new Map<string, Cell>();
  private readonly providerLabels = new Map<string, string>();
  /** Input and cache-read tokens per account (connection id) and per combo: [input, cache_read] cells. */
  private readonly promptCells = new Map<string, [Cell, Cell]>();
  private readonly accounts = new CappedLabel(MAX_OTHER_LABELS);
  private unsubscribe?: () => void;

  private readonly requests = new ValueFamily('router_requests_total', 'Proxied attempts recorded (one per usage row; a request that failed over counts each attempt).', ['route', 'client_format', 'provider', 'model', 'combo', 'status_class'], 'counter');
  private readonly duration = new HistogramFamily('router_request_duration_seconds', 'Time from the request to the end of the attempt (a stream: its last byte).', ['route', 'provider', 'model', 'status_class'], DURATION_BUCKETS);
  private readonly upstream = new HistogramFamily('router_upstream_duration_seconds', 'Time waiting on the upstream (whole reply, or until a stream committed): Server-Timing upstream.', ['provider', 'model'], DURATION_BUCKETS);
  private readonly overhead = new HistogramFamily('router_overhead_seconds', "Router's own time per served reply: Server-Timing router (total minus upstream).", ['provider', 'mode'], OVERHEAD_BUCKETS);
  private readonly ttfb = new HistogramFamily('router_time_to_first_byte_seconds', 'Streams: time from the request until the reply committed (headers and first content sent).', ['provider'], DURATION_BUCKETS);
  private readonly tokens = new ValueFamily('router_tokens_total', 'Tokens recorded, by kind (input, output, cache_read, cache_write, reasoning).', ['provider', 'model', 'kind'], 'counter');
  private readonly cost = new ValueFamily('router_cost_usd_total', 'Cost of recorded attempts, US dollars.', ['provider', 'model'], 'counter');
  private readonly prompt = new ValueFamily('router_prompt_tokens_total', "Input tokens per account and per combo, and how many of them were read from the provider's prompt cache (kind input | cache_read; scope account | combo).", ['scope', 'name', 'kind'], 'counter');
  private readonly upstreamErrors = new ValueFamily('router_upstream_errors_total', 'Failed upstream attempts by kind (network, timeout, rate_limit, server, auth, quota, model_access, client, empty, content_filter) and the status reported for it.', ['provider', 'kind', 'status_class'], 'counter');

  constructor(
    private readonly src: MetricsSources,
    opts: { maxModels?: number } = {},
  ) {
    this.models = new CappedLabel(opts.maxModels ?? MAX_MODEL_LABELS);
    const r = this.registry;
    for (const f of [this.requests, this.duration, this.upstream, this.overhead, this.ttfb, this.tokens, this.cost, this.prompt, this.upstreamErrors]) f.register(r);
    this.registerSnapshots();
    // RSS, heap, event-loop delay, open fds, GC: prom-client's standard process_* and nodejs_* families.
    collectDefaultMetrics({ register: r });
  }

  /** Starts counting usage records. */
  attach(): this {
    this.unsubscribe ??= this.src.usage.onRecord((rec) => this.record(rec));
    return this;
  }

  /** Counts one usage record (the record listener; also called directly by tests). */
  record(rec: UsageRecord): void {
    const s = this.find(rec) ?? this.newSeries(rec);
    s.requests.value++;
    observe(s.duration, rec.latencyMs / 1000);
    if (rec.upstreamMs !== null) observe(s.upstream, rec.upstreamMs / 1000);
    const t = s.tokens;
    if (rec.tokensIn) t[0]!.value += rec.tokensIn;
    if (rec.tokensOut) t[1]!.value += rec.tokensOut;
    if (rec.cacheReadTokens) t[2]!.value += rec.cacheReadTokens;
    if (rec.cacheWriteTokens) t[3]!.value += rec.cacheWriteTokens;
    if (rec.reasoningTokens) t[4]!.value += rec.reasoningTokens;
    if (rec.costUsd) s.cost.value += rec.costUsd;
    if (rec.tokensIn) {
      if (rec.connectionId !== null) this.promptTokens('a', rec.connectionId, rec);
      if (rec.combo !== null) this.promptTokens('c', rec.combo, rec);
    }
  }

  /** Adds a record's input and cache-read tokens to its account's or combo's cells. */
  private promptTokens(scope: 'a' | 'c', name: string, rec: UsageRecord): void {
    const key = scope + name;
    let cells = this.promptCells.get(key);
    if (!cells) {
      const label = scope === 'a' ? this.accounts.of(this.accountName(name)) : this.combos.of(name);
      const s = scope === 'a' ? 'account' : 'combo';
      cells = [this.prompt.cell(s, label, 'input'), this.prompt.cell(s, label, 'cache_read')];
      if (this.promptCells.size < MAX_SERIES_CACHE) this.promptCells.set(key, cells);
    }
    cells[0].value += rec.tokensIn;
    if (rec.cacheReadTokens) cells[1].value += rec.cacheReadTokens;
  }

  /** An account as its label reads: `<provider>/<connection name>` (the id when the connection is gone). */
  private accountName(connectionId: string): string {
    const c = this.src.connections.get(connectionId);
    return c ? `${this.src.label(c.provider)}/${c.name}` : connectionId;
  }

  /** The Server-Timing figures of one served reply (ms), as sent in its header. */
  serverTiming(providerId: string, routerMs: number, upstreamMs: number, stream: boolean): void {
    const cells = this.timingCells[stream ? 1 : 0];
    let c = cells.get(providerId);
    if (!c) {
      const provider = this.provider(providerId);
      c = { overhead: this.overhead.cell(provider, stream ? 'stream' : 'json'), ttfb: stream ? this.ttfb.cell(provider) : undefined };
      if (cells.size < MAX_SERIES_CACHE) cells.set(providerId, c);
    }
    observe(c.overhead, routerMs / 1000);
    if (c.ttfb) observe(c.ttfb, (routerMs + upstreamMs) / 1000);
  }

  /** One failed upstream attempt, by the kind its error was classified as. */
  upstreamError(providerId: string, kind: string, status: number): void {
    const key = `${providerId}\u0000${kind}\u0000${status}`;
    let c = this.errorCells.get(key);
    if (!c) {
      c = this.upstreamErrors.cell(this.provider(providerId), kind, statusClass(status));
      this.errorCells.set(key, c);
    }
    c.value++;
  }

  /** The exposition text and its content type. */
  async scrape(): Promise<{ text: string; contentType: string }> {
    return { text: await this.registry.metrics(), contentType: this.registry.contentType };
  }

  close(): void {
    this.unsubscribe?.();
    this.unsubscribe = undefined;
  }

  private find(rec: UsageRecord): Series | undefined {
    const list = this.series.get(rec.model);
    if (list === undefined) return undefined;
    for (const s of list) {
      // A model counted under "other" while unknown has its own series once it earned a label.
      if (s.other && this.models.peek(rec.model) !== OTHER) continue;
      if (s.status === rec.status && s.provider === rec.provider && s.endpoint === rec.endpoint && s.combo === rec.combo && s.clientFormat === rec.clientFormat) return s;
    }
    return undefined;
  }

  private newSeries(rec: UsageRecord): Series {
    let list = this.series.get(rec.model);
    if (list === undefined || list.length >= MAX_SERIES_PER_MODEL) {
      if (this.series.size >= MAX_SERIES_CACHE) this.series.clear();
      list = [];
      this.series.set(rec.model, list);
    }
    const route = this.routes.of(rec.endpoint);
    const provider = this.provider(rec.provider);
    const model = this.modelLabel(rec);
    const cls = statusClass(rec.status);
    const s: Series = {
      endpoint: rec.endpoint,
      clientFormat: rec.clientFormat,
      provider: rec.provider,
      combo: rec.combo,
      status: rec.status,
      other: model === OTHER,
      requests: this.requests.cell(route, rec.clientFormat ?? '', provider, model, rec.combo === null ? '' : this.combos.of(rec.combo), cls),
      duration: this.duration.cell(route, provider, model, cls),
      upstream: this.upstream.cell(provider, model),
      tokens: TOKEN_KINDS.map((k) => this.tokens.cell(provider, model, k)),
      cost: this.cost.cell(provider, model),
    };
    list.push(s);
    return s;
  }

  /**
   * The model label of a record. Only a model that is real takes one of the capped places: one an upstream
   * was asked for (the row has an account or upstream time, or was served) or one its provider's list
   * knows. Requests router refused for a name it does not know count under "other" without using a place,
   * so a client sending made-up names cannot push the real models out of their labels.
   */
  private modelLabel(rec: UsageRecord): string {
    const real =
      rec.connectionId !== null || rec.upstreamMs !== null || rec.status < 400 || (this.src.knownModel?.(rec.provider, rec.model) ?? false);
    return real ? this.models.of(rec.model) : this.models.peek(rec.model);
  }

  private provider(id: string): string {
    let l = this.providerLabels.get(id);
    if (l === undefined) {
      l = this.providers.of(this.src.label(id));
      if (this.providerLabels.size < MAX_SERIES_CACHE) this.providerLabels.set(id, l);
    }
    return l;
  }

  /** Families read from their source at scrape time: nothing is kept up to date per request. */
  private registerSnapshots(): void {
    const { src } = this;
    const r = this.registry;
    const gauge = (name: string, help: string, labels: string[], refresh: (f: ValueFamily) => void) =>
      new ValueFamily(name, help, labels, 'gauge', refresh).register(r);
    const counter = (name: string, help: string, read: () => number) =>
      new ValueFamily(name, help, [], 'counter', (f) => (f.cell().value = read())).register(r);
    gauge('router_info', 'Always 1; the version label names the running build.', ['version'], (f) => (f.cell(src.version).value = 1));
    const hot = src.hot;
    if (hot) {
      gauge('router_hot_state_up', 'Hot shared state reachable (1) or not (0: limits fall back to this node\'s share); kind "local" (one machine) or "redis".', ['kind'], (f) => {
        const h = hot();
        f.cell(h.kind).value = h.healthy ? 1 : 0;
      });
      gauge('router_hot_state_latency_ms', 'Last heartbeat round trip to Redis, ms (absent on one machine).', [], (f) => {
        const ms = hot().latencyMs;
        if (ms !== null) f.cell().value = ms;
      });
      gauge('router_cluster_live_nodes', 'Routers seen alive through the hot state (1 on one machine).', [], (f) => (f.cell().value = hot().liveNodes));
    }
    const database = src.database;
    if (database) {
      gauge('router_database_up', 'Shared database reachable (1) or not (0: requests served from the last known configuration, management writes answer 503).', ['kind'], (f) => {
        f.cell('postgres').value = database().healthy ? 1 : 0;
      });
      gauge('router_database_latency_ms', 'Last probe round trip to the shared database, ms (absent while it is down).', [], (f) => {
        const ms = database().latencyMs;
        if (ms !== null) f.cell().value = ms;
      });
    }
    gauge('router_inflight_requests', 'Proxied HTTP requests in flight.', [], (f) => (f.cell().value = src.usage.inflight.count));
    gauge('router_open_streams', 'Proxied replies whose headers are sent and whose body still flows (streams).', [], (f) => (f.cell().value = src.usage.inflight.openStreams()));
    gauge('router_usage_queue_depth', 'Usage rows waiting to be written (queue and writer backlog).', [], (f) => (f.cell().value = src.usage.stats().queued));
    counter('router_usage_dropped_total', 'Usage rows dropped because the queue was full.', () => src.usage.stats().dropped);
    counter('router_usage_estimation_skipped_total', 'Rows stored without token estimates because the estimator was saturated.', () => src.usage.stats().estimationSkipped);
    counter('router_otel_spans_dropped_total', 'Trace spans dropped by the OTLP exporter (queue full or collector unreachable).', () => src.spansDropped?.() ?? 0);
    gauge('router_breaker_state', 'Circuit breaker state per provider (model "*") or per provider and model: 1 for the current state.', ['provider', 'model', 'state'], (f) => {
      f.clear();
      for (const b of src.resilience.breakers.snapshot()) {
        const model = b.model === undefined ? '*' : this.models.of(b.model);
        for (const state of ['closed', 'open', 'half-open']) f.cell(this.provider(b.provider), model, state).value = b.state === state ? 1 : 0;
      }
    });
    gauge('router_breaker_consecutive_failures', 'Consecutive breaker-eligible failures per circuit.', ['provider', 'model'], (f) => {
      f.clear();
      for (const b of src.resilience.breakers.snapshot()) f.cell(this.provider(b.provider), b.model === undefined ? '*' : this.models.of(b.model)).value = b.consecutiveFailures;
    });
    gauge('router_cached_input_share', "Share of input tokens read from the provider's prompt cache, per account and per combo (0..1): what cache affinity buys.", ['scope', 'name'], (f) => {
      f.clear();
      // Several accounts may share a label ("other" past the cap): each label's cells are read once.
      const seen = new Set<Cell>();
      for (const [input, cached] of this.promptCells.values()) {
        if (seen.has(input) || input.value <= 0) continue;
        seen.add(input);
        f.cell(input.labels.scope!, input.labels.name!).value = cached.value / input.value;
      }
    });
    gauge('router_cooldowns', 'Accounts cooling down per provider and model ("*": every model).', ['provider', 'model'], (f) => {
      f.clear();
      for (const c of src.resilience.cooldowns.list()) this.cooldownCell(f, c.connectionId, c.model).value++;
    });
    gauge('router_cooldown_remaining_seconds', 'Longest cooldown left per provider and model.', ['provider', 'model'], (f) => {
      f.clear();
      for (const c of src.resilience.cooldowns.list()) {
        const cell = this.cooldownCell(f, c.connectionId, c.model);
        cell.value = Math.max(cell.value, c.remainingSeconds);
      }
    });
  }

  private cooldownCell(f: ValueFamily, connectionId: string, model: string): Cell {
    const provider = this.src.connections.get(connectionId)?.provider ?? 'unknown';
    return f.cell(this.provider(provider), model === '*' ? '*' : this.models.of(model));
  }
}

