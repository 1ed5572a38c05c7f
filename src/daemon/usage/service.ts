import type { EventBus } from '../events/bus.js';
import type { RequestFailedData } from '../events/types.js';
import { sanitizeMessage } from '../http/errors.js';
import { statusInfo } from '../../shared/error-status.js';
import type { Logger } from '../logger.js';
import type { Outcome } from '../proxy/outcome.js';
import type { SettingsStore } from '../settings/store.js';
import type { Db } from '../store/db.js';
import type { WireFormat } from '../translate/ir.js';
import { promptTokens, requestText, TokenEstimator } from './estimate.js';
import { holdReplyEnd } from './durable-reply.js';
import { InflightTracker } from './inflight.js';
import { PricingStore, type PriceCatalog } from './pricing.js';
import { loadPriceOverridesSync, SqlPricingRepository } from './pricing-sql.js';
import { CACHE_HIT, NOTHING_BILLED, setCost, usageOf } from './row-cost.js';
import { BoundedQueue } from './queue.js';
import type { UsageRecord } from './record.js';
import { emitServed } from './served-events.js';
import { sanitizeHeaderValue } from './sanitize.js';
import { heuristicCount } from './token-count.js';
import { UsageWriter } from './writer.js';
import type { RowWriter } from './row-writer.js';
import type { UsageRepository } from './port.js';
import { SqlUsageRepository } from './sql-repository.js';
import { SqliteDriver } from '../store/sqlite-driver.js';
import { count, noop, notesJson, queuedPromise, round2, servedName, type QueuedSignal } from './record-fields.js';

/**
 * Optional fields an Outcome may carry beyond its declared ones; read when present. The proxy does not
 * set them yet (see docs/usage.md): `client` for the stored user agent and forwarded-for headers (relay
 * route), `outputText` so a reply without upstream usage gets an estimated output count too.
 */
export interface OutcomeExtras {
  client?: { userAgent?: string | null; forwardedFor?: string | null };
  outputText?: string;
  /** The reply came from the response cache (src/daemon/cache/): no upstream call, so the row costs 0. */
  cacheHit?: boolean;
  /** Multiplies the row's cost (a provider batch bills its requests at a discount: src/daemon/batches/native.ts). */
  costFactor?: number;
}

export interface UsageOptions {
  db: Db;
  settings: SettingsStore;
  events: EventBus;
  log: Logger;
  /** False (env ROUTER_USAGE_DISABLED=1): recordOutcome does nothing (benchmark baseline). */
  enabled?: boolean;
  /** Rows held in memory at most; beyond it the oldest are dropped (counted and logged). */
  capacity?: number;
  /** Queue length that triggers a flush before the timer. */
  batchSize?: number;
  /**
   * Longest time a row waits in memory before it is handed to the writer (default 100 ms): what a crash
   * (kill -9) can lose is the rows of about this long, plus the writer's commit (docs/usage.md).
   */
  flushDelayMs?: number;
  /** Period of the housekeeping tick (request.failed finalization, a flush that was missed). */
  flushIntervalMs?: number;
  /** Estimations in progress at most; beyond it rows are stored without tokens. */
  maxEstimating?: number;
  estimator?: TokenEstimator;
  /**
   * The compiled writer worker (default: writer-worker.js next to this module, which exists in dist/ only).
   * Null or absent: rows are written on the main thread in slices.
   */
  writerUrl?: URL | null;
  /** The model catalog, consulted for models neither an override nor the shipped table prices. */
  catalog?: PriceCatalog;
  /** The price table (boot builds it on the pricing port); default: loaded from `db` with `catalog`. */
  pricing?: PricingStore;
  /** Where rows are read (and pruned): default the SQLite file `db`; PostgreSQL in cluster mode. */
  repo?: UsageRepository;
  /** Where rows are written: default the SQLite writer worker on `db`; the spooling PostgreSQL writer in cluster mode. */
  writer?: RowWriter;
}

interface Meta {
  /** The served model as a public id (`<provider>/<model>`), for request.completed. */
  publicModel: string;
  /** performance.now() at request start (failure finalization). */
  t0: number;
}

interface Job {
  /** Resolved when the row is queued (durable replies wait for it); created on demand. */
  queued?: QueuedSignal;
  rec: UsageRecord;
  meta: Meta;
  format: WireFormat;
  raw: Record<string, unknown>;
  model: string;
  outputText?: string;
  done: boolean;
}

interface PendingFailure {
  t0: number;
  since: number;
  attempts: number;
  data: Omit<RequestFailedData, 'attempts'>;
}

const DAY_MS = 86_400_000;
const DEFAULT_FLUSH_DELAY_MS = 100;
/** Rows written per event-loop turn by background flushes. */
const SLICE_ROWS = 64;

/** A failed attempt is reported as request.failed at the latest this long after it was recorded. */
const FAILURE_MAX_WAIT_MS = 10 * 60_000;
/** Without a listener-side tracker (in-process use), wait this long for a further attempt instead. */
const FAILURE_GRACE_MS = 2_000;
const RATE_WINDOW_S = 10;

/**
 * Usage tracking: turns every proxied attempt into a usage record, prices it, queues it in memory and
 * hands queued rows to the writer once per second (or per batch): a worker thread with its own database
 * connection in the daemon (writer.ts), so neither the request path nor the event loop waits on the disk.
 * Emits request.completed / request.failed and tells record listeners (the live channel).
 */
export class UsageService {
  readonly pricing: PricingStore;
  readonly inflight = new InflightTracker();
  readonly enabled: boolean;
  /** The usage storage port: every read of the request log and analytics goes through it. */
  readonly repo: UsageRepository;
  private readonly queue: BoundedQueue<UsageRecord>;
  private readonly batchSize: number;
  private readonly maxEstimating: number;
  private readonly estimator: TokenEstimator;
  private readonly jobs = new Set<Job>();
  private readonly failures = new Map<string, PendingFailure>();
  private readonly listeners: Array<(rec: UsageRecord) => void> = [];
  private readonly writer: RowWriter;
  private readonly timers: NodeJS.Timeout[] = [];
  private flushScheduled = false;
  private flushTimer?: NodeJS.Timeout;
  private readonly flushDelayMs: number;
  /** usageDurability 'reply': the durable batch being committed, and the one replies wait for next. */
  private durableCurrent?: Promise<void>;
  private durableNext?: Promise<void>;
  private finalizeScheduled = false;
  private closed = false;
  private droppedLogged = 0;
  private lastDropLog = 0;
  private estimationSkipped = 0;
  private readonly rate = new Uint32Array(60);
  private rateSecond = 0;

  constructor(private readonly opts: UsageOptions) {
    this.enabled = opts.enabled ?? true;
    this.pricing = opts.pricing ?? filePricing(new SqliteDriver(opts.db), opts.catalog);
    this.queue = new BoundedQueue(opts.capacity ?? 10_000);
    this.batchSize = opts.batchSize ?? 500;
    this.maxEstimating = opts.maxEstimating ?? 256;
    this.flushDelayMs = opts.flushDelayMs ?? DEFAULT_FLUSH_DELAY_MS;
    this.estimator = opts.estimator ?? new TokenEstimator();
    this.inflight.onSettled = () => {
      if (this.failures.size) this.scheduleFinalize();
    };
    // usageDurability 'reply': a proxied reply ends only once its row is committed (durable-reply.ts).
    this.inflight.onTrack = (res) => {
      if (this.durableReplies) holdReplyEnd(res, this.durableWait);
    };
    // Disabled (benchmark baseline): no worker thread either.
    this.repo = opts.repo ?? new SqlUsageRepository(new SqliteDriver(opts.db));
    this.writer = opts.writer ?? new UsageWriter({ db: opts.db, log: opts.log, workerUrl: this.enabled ? opts.writerUrl : null });
    const tick = setInterval(() => {
      this.flushInSlices();
      this.finalizeFailures();
    }, opts.flushIntervalMs ?? 1_000);
    const daily = setInterval(() => void this.prune(), DAY_MS);
    tick.unref();
    daily.unref();
    this.timers.push(tick, daily);
    opts.settings.onChange((_next, changed) => {
      if (!this.closed && changed.includes('usageRetentionDays')) void this.prune();
    });
    void this.prune();
  }

  /**
   * The proxy's hook (via recordOutcome): O(1), no disk, never throws. A reply without upstream usage is
   * handed to the background estimator and recorded when its tokens are counted.
   */
  recordOutcome(o: Outcome): void {
    if (!this.enabled || this.closed) return;
    // Every property of the outcome is read once: outcomes come in many shapes (megamorphic loads, and
    // absent optional fields miss the inline caches), so each read counts on the request path.
    const x = o as Outcome & OutcomeExtras;
    const { call, target, usage: u, t0, upstreamMs, status } = o;
    const client = x.client;
    const error = o.error;
    const reported = u !== undefined && (typeof u.inputTokens === 'number' || typeof u.outputTokens === 'number');
    const requested = call.model;
    const rec: UsageRecord = {
      ts: Date.now(),
      traceId: o.traceId,
      apiKeyId: o.auth.key?.id ?? null,
      endpoint: call.endpoint,
      clientFormat: call.clientFormat,
      provider: target.provider.id,
      model: target.model,
      requestedModel: typeof requested === 'string' ? requested : null,
      connectionId: target.connectionId ?? null,
      combo: o.combo ?? null,
      status,
      latencyMs: round2(performance.now() - t0),
      upstreamMs: upstreamMs === undefined ? null : round2(upstreamMs),
      tokensIn: u ? count(u.inputTokens) : 0,
      tokensOut: u ? count(u.outputTokens) : 0,
      cacheReadTokens: u ? count(u.cacheReadTokens) : 0,
      cacheWriteTokens: u ? count(u.cacheWriteTokens) : 0,
      reasoningTokens: u ? count(u.reasoningTokens) : 0,
      cacheWrite1hTokens: u ? count(u.cacheWrite1hTokens) : 0,
      audioInputTokens: u ? count(u.audioInputTokens) : 0,
      audioOutputTokens: u ? count(u.audioOutputTokens) : 0,
      imageInputTokens: u ? count(u.imageInputTokens) : 0,
      imageOutputTokens: u ? count(u.imageOutputTokens) : 0,
      costUsd: null,
      costSource: 'unpriced',
      priceVersion: null,
      streamed: o.streamed === true,
      estimated: false,
      finishReason: o.finishReason ?? null,
      error: error ? sanitizeHeaderValue(error, 1000) : null,
      userAgent: client ? sanitizeHeaderValue(client.userAgent) : null,
      forwardedFor: client ? sanitizeHeaderValue(client.forwardedFor) : null,
      notes: notesJson(o.notes),
      sessionId: o.session === undefined ? null : sanitizeHeaderValue(o.session),
      servedModel: servedName(o.servedModel, target.model),
    };
    const meta: Meta = { publicModel: target.publicModel, t0 };
    // A cache hit spent nothing upstream: it costs 0 for certain; its tokens are those of the cached reply.
    if (x.cacheHit) {
      setCost(rec, CACHE_HIT);
      return this.commit(rec, meta);
    }
    // An endpoint that priced its reply itself (images, audio; null when it knows no price): that cost, and
    // no token estimation.
    const priced = o.costUsd;
    if (priced !== undefined) {
      if (priced !== null) setCost(rec, { costUsd: priced, costSource: 'computed', priceVersion: this.pricing.resolve(rec.provider, rec.model)?.version ?? null });
      return this.commit(rec, meta);
    }
    // The provider's own figure for the reply (OpenRouter's usage.cost) wins over any computed one.
    const reportedCost = u?.costUsd;
    if (typeof reportedCost === 'number' && Number.isFinite(reportedCost) && reportedCost >= 0) {
      setCost(rec, { costUsd: reportedCost * (x.costFactor ?? 1), costSource: 'reported', priceVersion: null });
      return this.commit(rec, meta);
    }
    if (!reported && status < 400) {
      if (this.jobs.size < this.maxEstimating) {
        const job: Job = { rec, meta, format: call.clientFormat, raw: call.raw, model: requested, outputText: x.outputText, done: false };
        this.jobs.add(job);
        setImmediate(() => void this.estimate(job));
        return;
      }
      this.estimationSkipped++;
      this.warnRateLimited('usage estimation backlog full: row stored without token counts', { skipped: this.estimationSkipped });
    }
    // A failed attempt with no tokens was billed nothing, whatever the model's price (requests refused
    // before any upstream attempt too): a certain $0, not an unknown.
    setCost(rec, status >= 400 && rec.tokensIn === 0 && rec.tokensOut === 0 ? NOTHING_BILLED : this.pricing.cost(rec.provider, rec.model, usageOf(rec), x.costFactor ?? 1));
    this.commit(rec, meta);
  }

  /** Subscribes to every committed record (the live channel); returns the unsubscribe function. */
  onRecord(fn: (rec: UsageRecord) => void): () => void {
    this.listeners.push(fn);
    return () => {
      const i = this.listeners.indexOf(fn);
      if (i >= 0) this.listeners.splice(i, 1);
    };
  }

  /**
   * Background writing. With the writer worker (the daemon): queued rows are handed over in batches of at
   * most batchSize rows, while fewer than `capacity` rows wait for the worker (beyond that they stay in the
   * bounded queue, which drops its oldest). On the main thread (no compiled worker, or it failed): at most
   * SLICE_ROWS rows per event-loop turn, continuing on the next turn, so a large backlog never stalls
   * requests in flight for the whole batch (a 500-row transaction took 7-42 ms).
   */
  private flushInSlices(): void {
    this.flushScheduled = false;
    if (this.flushTimer) {
      clearTimeout(this.flushTimer);
      this.flushTimer = undefined;
    }
    if (this.closed || this.queue.length === 0) return;
    this.logDrops();
    if (this.writer.viaWorker) {
      const sync = this.durableReplies;
      while (this.queue.length > 0 && this.writer.backlog < this.queue.capacity) void this.writer.write(this.queue.drain(this.batchSize), this.batchSize, sync);
      return;
    }
    void this.writer.write(this.queue.drain(SLICE_ROWS));
    if (this.queue.length > 0 && !this.flushScheduled) {
      this.flushScheduled = true;
      setImmediate(() => this.flushInSlices());
    }
  }

  /**
   * Writes every queued row and resolves, with the number of rows this call wrote, once they and every
   * row handed to the writer before are in the database: a read after `await flush()` sees everything
   * recorded so far. On the main-thread writer the rows are written before this returns.
   */
  flush(sync = false): Promise<number> {
    this.flushScheduled = false;
    if (this.closed) return Promise.resolve(0);
    this.logDrops();
    return this.writer.write(this.queue.drain(), this.batchSize, sync);
  }

  /**
   * Setting usageDurability 'reply': settles once every row recorded so far, those still being estimated
   * included, is committed and synced to disk; undefined when nothing is pending. Replies that end in the
   * same event-loop turn share one flush (one transaction, one fsync).
   */
  whenDurable(): Promise<void> | undefined {
    if (this.closed) return undefined;
    if (this.jobs.size > 0) return Promise.all([...this.jobs].map(queuedPromise)).then(() => this.durableBatch());
    if (this.queue.length === 0 && this.writer.backlog === 0) return undefined;
    return this.durableBatch();
  }

  private readonly durableWait = (): Promise<void> | undefined => this.whenDurable();

  /** Setting usageDurability is 'reply' (and recording is on). */
  private get durableReplies(): boolean {
    return this.enabled && this.opts.settings.get().usageDurability === 'reply';
  }

  /**
   * Group commit: one durable batch (a transaction and an fsync) at a time. Replies that end while one is
   * being committed all wait for the next, which takes every row queued by then when the current one is
   * done; the first one waits for the end of this event-loop turn.
   */
  private durableBatch(): Promise<void> {
    if (this.durableNext) return this.durableNext;
    const run = (): Promise<void> => {
      this.durableNext = undefined;
      const batch = this.flush(true).then(noop, noop);
      this.durableCurrent = batch;
      void batch.then(() => {
        if (this.durableCurrent === batch) this.durableCurrent = undefined;
      });
      return batch;
    };
    const after = this.durableCurrent ?? new Promise<void>((resolve) => setImmediate(resolve));
    this.durableNext = after.then(run);
    return this.durableNext;
  }

  /** Deletes rows older than the retention setting, 5,000 per statement; resolves with the number deleted. */
  async prune(now = Date.now()): Promise<number> {
    const days = this.opts.settings.get().usageRetentionDays;
    let total = 0;
    try {
      for (;;) {
        const n = await this.repo.pruneBefore(now - days * DAY_MS, 5000);
        total += n;
        if (n < 5000 || this.closed) break;
      }
    } catch (err) {
      this.opts.log.error('usage retention pruning failed', { error: err instanceof Error ? err.message : String(err) });
    }
    if (total > 0) this.opts.log.info('usage log pruned', { rows: total, retentionDays: days });
    return total;
  }

  /** Completed attempts per second over the last ten seconds. */
  requestsPerSecond(): number {
    const sec = Math.floor(Date.now() / 1000);
    this.advanceRate(sec);
    let sum = 0;
    for (let i = 1; i <= RATE_WINDOW_S; i++) sum += this.rate[(sec - i + 60) % 60]!;
    return sum / RATE_WINDOW_S;
  }

  /** Queue and writer counters (status messages, tests). */
  stats(): { queued: number; dropped: number; written: number; estimating: number; estimationSkipped: number; writer: RowWriter['mode']; spooled: number } {
    return {
      queued: this.queue.length + this.writer.backlog,
      spooled: this.writer.spooled ?? 0,
      dropped: this.queue.dropped,
      written: this.writer.written,
      estimating: this.jobs.size,
      estimationSkipped: this.estimationSkipped,
      writer: this.writer.mode,
    };
  }

  /** Waits until background estimations have been recorded (tests, analytics reads). */
  async settle(timeoutMs = 5_000): Promise<void> {
    const until = Date.now() + timeoutMs;
    while (this.jobs.size > 0 && Date.now() < until) await new Promise((r) => setTimeout(r, 10));
  }

  /**
   * Shutdown: counts pending estimations with the character heuristic, writes everything queued, stops
   * timers and the estimator. Synchronous, so `closeServices` can call it before closing the database:
   * with the writer worker it blocks until the worker has written every row and closed its connection.
   */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    for (const t of this.timers) clearInterval(t);
    clearTimeout(this.flushTimer);
    for (const job of [...this.jobs]) {
      if (job.done) continue;
      job.done = true;
      this.jobs.delete(job);
      let text = '';
      let messages = 1;
      try {
        ({ text, messages } = requestText(job.format, job.raw, job.model));
      } catch {
        // estimate from nothing: the row keeps zero input tokens
      }
      this.completeEstimate(job, promptTokens(heuristicCount(text), messages), heuristicCount(job.outputText ?? ''));
    }
    this.logDrops();
    this.writer.close(this.queue.drain());
    this.estimator.close();
  }

  private async estimate(job: Job): Promise<void> {
    try {
      if (job.done) return;
      const { text, messages } = requestText(job.format, job.raw, job.model);
      const [input, output] = await this.estimator.count([text, job.outputText ?? '']);
      if (job.done) return;
      job.done = true;
      this.jobs.delete(job);
      this.completeEstimate(job, promptTokens(input ?? 0, messages), output ?? 0);
    } catch (err) {
      if (job.done) return;
      job.done = true;
      this.jobs.delete(job);
      this.opts.log.warn('usage estimation failed', { error: err instanceof Error ? err.message : String(err) });
      setCost(job.rec, this.pricing.cost(job.rec.provider, job.rec.model, usageOf(job.rec)));
      this.commit(job.rec, job.meta);
      job.queued?.resolve();
    }
  }

  private completeEstimate(job: Job, input: number, output: number): void {
    const rec = job.rec;
    rec.tokensIn = input;
    rec.tokensOut = output;
    rec.estimated = true;
    setCost(rec, this.pricing.cost(rec.provider, rec.model, usageOf(rec)));
    this.commit(rec, job.meta);
    job.queued?.resolve();
  }

  /**
   * Queues a finished record, then tells listeners and the event bus. The queue is handed to the writer
   * within flushDelayMs of its first row (at once when a batch is full): that delay bounds what a crash
   * loses.
   */
  private commit(rec: UsageRecord, meta: Meta): void {
    if (!this.queue.push(rec)) this.warnRateLimited('usage queue full: dropping the oldest rows', { dropped: this.queue.dropped });
    if (!this.closed) {
      if (this.queue.length >= this.batchSize) {
        if (!this.flushScheduled) {
          this.flushScheduled = true;
          setImmediate(() => this.flushInSlices());
        }
      } else if (!this.flushTimer) {
        this.flushTimer = setTimeout(this.onFlushTimer, this.flushDelayMs);
        this.flushTimer.unref();
      }
    }
    this.countRate(rec.ts);
    for (const fn of this.listeners) {
      try {
        fn(rec);
      } catch {
        // a listener must not break recording
      }
    }
    const events = this.opts.events;
    if (rec.status < 400) {
      if (this.failures.size) this.failures.delete(rec.traceId);
      emitServed(events, rec, meta.publicModel);
      return;
    }
    const prev = this.failures.get(rec.traceId);
    this.failures.set(rec.traceId, {
      t0: meta.t0,
      since: performance.now(),
      attempts: (prev?.attempts ?? 0) + 1,
      data: {
        trace_id: rec.traceId,
        api_key_id: rec.apiKeyId,
        provider: rec.provider,
        model: rec.requestedModel ?? meta.publicModel,
        status: rec.status,
        error_code: statusInfo(rec.status).code,
        error_message: sanitizeMessage(rec.error ?? statusInfo(rec.status).message),
      },
    });
    this.scheduleFinalize();
  }

  private readonly onFlushTimer = (): void => {
    this.flushTimer = undefined;
    this.flushInSlices();
  };

  private scheduleFinalize(): void {
    if (this.finalizeScheduled || this.closed) return;
    this.finalizeScheduled = true;
    setImmediate(() => {
      this.finalizeScheduled = false;
      this.finalizeFailures();
    });
  }

  /**
   * A failed attempt is the request's final failure once no further attempt can follow: every proxied
   * request that began before it has ended (the tracker sees the listener), or, without a tracker, after a
   * grace period with no further attempt of the same trace. A later attempt of the trace supersedes it.
   */
  private finalizeFailures(): void {
    if (this.failures.size === 0) return;
    const now = performance.now();
    const oldest = this.inflight.oldestStart();
    const tracked = this.inflight.attached;
    for (const [trace, f] of this.failures) {
      const ended = tracked ? oldest === undefined || oldest > f.t0 : now - f.since >= FAILURE_GRACE_MS;
      if (!ended && now - f.since < FAILURE_MAX_WAIT_MS) continue;
      this.failures.delete(trace);
      this.opts.events.emit('request.failed', { ...f.data, attempts: f.attempts });
    }
  }

  /** Counts a record finished at `now` (its ts: no second clock read; an estimated row can be late). */
  private countRate(now: number): void {
    const sec = Math.max(this.rateSecond, Math.floor(now / 1000));
    this.advanceRate(sec);
    this.rate[sec % 60]!++;
  }

  private advanceRate(sec: number): void {
    if (sec === this.rateSecond) return;
    // Clear the buckets of the seconds that passed without a record (at most the whole ring).
    const steps = Math.min(60, sec - this.rateSecond);
    for (let i = 1; i <= steps; i++) this.rate[(this.rateSecond + i) % 60] = 0;
    this.rateSecond = sec;
  }

  private logDrops(): void {
    const dropped = this.queue.dropped;
    if (dropped > this.droppedLogged) {
      this.opts.log.warn('usage queue overflowed: oldest rows were dropped', { dropped: dropped - this.droppedLogged, totalDropped: dropped });
      this.droppedLogged = dropped;
      this.lastDropLog = Date.now();
    }
  }

  private warnRateLimited(msg: string, data: Record<string, unknown>): void {
    const now = Date.now();
    if (now - this.lastDropLog < 10_000) return;
    this.lastDropLog = now;
    this.opts.log.warn(msg, data);
  }
}

/** The price table on the embedded file, loaded at once (a service built without boot's pricing store). */
function filePricing(driver: SqliteDriver, catalog: PriceCatalog | undefined): PricingStore {
  return new PricingStore(new SqlPricingRepository(driver), loadPriceOverridesSync(driver), catalog);
}
