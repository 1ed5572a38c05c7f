import type { Agent, Dispatcher } from 'undici';
import { createAgent } from '../net/upstream.js';
import { outboundDispatcher } from '../net/outbound-proxy.js';
import type { EventBus } from '../events/bus.js';
import type { AnyRouterEvent } from '../events/types.js';
import type { HotState } from '../hot/port.js';
import type { Logger } from '../logger.js';
import type { SettingsStore } from '../settings/store.js';
import type { Db } from '../store/db.js';
import { SecretError } from '../store/secrets.js';
import { checkDestinationUrl, DestinationError, parseHttpUrl, resolvePublic, systemResolver, vettedLookup, type Resolver } from './destination.js';
import { DEFAULT_POLICY, deliveryHeaders, failedAttempt, postOnce, withRetries, type AttemptResult, type DeliveryPolicy } from './delivery.js';
import { buildPayload, PayloadError, TELEGRAM_API_BASE } from './format.js';
import { WebhookStore, type WebhookKind, type WebhookRecord } from './store.js';
import type { DeliveryRecord } from '../../shared/records.js';

export type { DeliveryRecord };

/** Failures after which a webhook is disabled (spec "Limits"). */
export const AUTO_DISABLE_AT = 10;
/** Bytes of the receiver's reply the test endpoint returns (spec "Limits"). */
export const TEST_CAPTURE_BYTES = 2048;

/** Reply of POST /api/webhooks/:id/test. */
export interface TestResult {
  delivered: boolean;
  status: number;
  responseBody: string;
  error: string;
}

/** Construction options; everything after `log` exists for tests. */
export interface WebhookServiceOptions {
  db: Db;
  settings: SettingsStore;
  /** The AES key file for stored secrets (`services.paths.secretKey`). */
  keyFile: string;
  log?: Logger;
  /** DNS resolver used for delivery (tests map public-looking names to loopback). */
  resolve?: Resolver;
  policy?: Partial<DeliveryPolicy>;
  /** Telegram Bot API base; default env ROUTER_TELEGRAM_API_BASE, then https://api.telegram.org. */
  telegramApiBase?: string;
  /** Deliveries one webhook may have in flight; beyond it new events for that webhook are dropped. */
  maxInFlightPerWebhook?: number;
  /**
   * The hot state: when shared (cluster mode), an event several nodes may emit (`event.once`) is delivered
   * to each webhook by the one node that claims it first.
   */
  hot?: HotState;
}

/** How long a claimed delivery stays claimed: far longer than any node's lag behind another for one event. */
export const CLAIM_TTL_MS = 24 * 3_600_000;

/**
 * Webhook dispatch: subscribes to the event bus and fans every event out to the enabled webhooks that
 * subscribe to it. The bus listener only looks up subscribers in memory and schedules the fan-out on the
 * next turn of the event loop, so emitters (the proxy hot path) never wait for, or see errors of, a
 * delivery. Each receiver's delivery runs independently; a slow one delays nobody else.
 */
/** Attempts kept per webhook, newest first (in memory: the history restarts with the daemon). */
export const DELIVERY_HISTORY = 50;

export class WebhookService {
  readonly store: WebhookStore;
  private readonly settings: SettingsStore;
  private readonly log?: Logger;
  private readonly policy: DeliveryPolicy;
  private readonly telegramApiBase?: string;
  private readonly maxInFlight: number;
  /** Connects only to addresses the public-destination check passed. */
  private readonly vetted: Agent;
  /** Plain resolution: Telegram, and every kind while private destinations are allowed. */
  private readonly open: Agent;
  private readonly resolve: Resolver;
  private readonly pending = new Set<Promise<void>>();
  private readonly inFlight = new Map<string, number>();
  private readonly history = new Map<string, DeliveryRecord[]>();
  private readonly lastDropLog = new Map<string, number>();
  private readonly shutdown = new AbortController();
  private readonly hot?: HotState;
  private lastClaimFailureLog = 0;
  private unsubscribe?: () => void;

  constructor(opts: WebhookServiceOptions) {
    this.store = new WebhookStore(opts.db, opts.keyFile);
    this.settings = opts.settings;
    this.log = opts.log;
    this.policy = { ...DEFAULT_POLICY, ...opts.policy };
    this.telegramApiBase = opts.telegramApiBase;
    this.maxInFlight = opts.maxInFlightPerWebhook ?? 100;
    this.hot = opts.hot?.shared ? opts.hot : undefined;
    const resolve = opts.resolve ?? systemResolver;
    this.resolve = resolve;
    // Short keep-alive: receivers are called rarely, and idle sockets should not pin a daemon's exit.
    const common = { keepAliveTimeout: 4_000, connections: 16 };
    this.vetted = createAgent({ ...common, connect: { lookup: vettedLookup(resolve, () => true) } });
    this.open = createAgent({ ...common, connect: { lookup: vettedLookup(resolve, () => false) } });
  }

  /** True while the public-destination check applies (setting allowPrivateWebhookDestinations off). */
  get checksDestinations(): boolean {
    return !this.settings.get().allowPrivateWebhookDestinations;
  }

  /**
   * Validates a destination for create and update: telegram holds a chat id (no URL check); other kinds
   * need an http(s) URL and, unless private destinations are allowed, a public one. Throws DestinationError.
   */
  checkDestination(kind: WebhookKind, url: string): void {
    if (kind === 'telegram') return;
    if (this.checksDestinations) checkDestinationUrl(url);
    else parseHttpUrl(url);
  }

  /** Subscribes to the events of `bus` that some enabled webhook wants (checked at each emit). */
  attach(bus: EventBus): void {
    this.unsubscribe?.();
    this.unsubscribe = bus.onAny(
      (event) => this.onEvent(event),
      (name) => !this.shutdown.signal.aborted && this.store.hasSubscribers(name),
    );
  }

  /** The bus listener: synchronous and cheap; the fan-out runs later. */
  onEvent(event: AnyRouterEvent): void {
    if (this.shutdown.signal.aborted) return;
    if (!this.store.hasSubscribers(event.event)) return;
    this.track(
      new Promise<void>((resolve) => setImmediate(resolve)).then(() => this.fanOut(event)),
    );
  }

  /**
   * Delivers one event to every subscribed, enabled webhook, concurrently, and when all have reached their
   * final outcome disables webhooks whose failure_count reached the threshold (spec state table).
   */
  async fanOut(event: AnyRouterEvent): Promise<void> {
    const targets = this.store.subscribers(event.event);
    await Promise.allSettled(targets.map((rec) => this.deliver(rec, event)));
    if (this.shutdown.signal.aborted) return;
    for (const id of this.store.disableFailing(AUTO_DISABLE_AT)) {
      this.log?.warn('webhook disabled after repeated failures', { webhookId: id, threshold: AUTO_DISABLE_AT });
    }
  }

  /** Sends one test.ping to one webhook, no retries, capturing the first 2048 bytes of the reply. */
  async test(rec: WebhookRecord): Promise<TestResult> {
    const event: AnyRouterEvent = {
      event: 'test.ping',
      timestamp: new Date().toISOString(),
      data: { message: 'Test ping from router', webhookId: rec.id },
    };
    const result = await this.attempt(rec, event, TEST_CAPTURE_BYTES);
    // A test is a delivery attempt (last_status, last_triggered_at) but not part of the failure streak: a
    // manual check must neither push a webhook towards auto-disable nor hide real failures by resetting.
    if (!this.shutdown.signal.aborted) this.store.recordAttempt(rec.id, result.status, new Date().toISOString());
    this.remember(rec.id, event.event, 1, result, true);
    return { delivered: result.ok, status: result.status, responseBody: result.responseBody, error: result.error };
  }

  /** The last delivery attempts of a webhook, newest first (at most DELIVERY_HISTORY). */
  deliveries(id: string): DeliveryRecord[] {
    return [...(this.history.get(id) ?? [])];
  }

  /** Forgets a deleted webhook's history. */
  forget(id: string): void {
    this.history.delete(id);
  }

  private remember(id: string, event: string, attempt: number, r: AttemptResult, test: boolean): void {
    let list = this.history.get(id);
    if (!list) this.history.set(id, (list = []));
    list.unshift({ at: new Date().toISOString(), event, attempt, status: r.status, ok: r.ok, error: r.error, test });
    if (list.length > DELIVERY_HISTORY) list.length = DELIVERY_HISTORY;
  }

  /** Resolves when every scheduled fan-out has finished (tests, graceful stop). */
  async idle(): Promise<void> {
    while (this.pending.size > 0) await Promise.allSettled([...this.pending]);
  }

  /** Stops dispatching: aborts waits between retries and in-flight requests, closes sockets. Idempotent. */
  close(): void {
    this.unsubscribe?.();
    this.shutdown.abort();
    void this.vetted.destroy().catch(() => {});
    void this.open.destroy().catch(() => {});
  }

  private track(p: Promise<void>): void {
    const guarded = p.catch((err) => this.log?.error('webhook fan-out failed', { error: String(err) }));
    this.pending.add(guarded);
    void guarded.finally(() => this.pending.delete(guarded));
  }

  /**
   * Whether this node delivers `event` to `rec`: always, unless the event names a happening other nodes of
   * a cluster may emit too; then only the node whose claim (Redis SET NX) lands first. With Redis
   * unreachable the event is delivered (a duplicate is preferred to a lost event) and the log says so.
   */
  private async claimed(rec: WebhookRecord, event: AnyRouterEvent): Promise<boolean> {
    if (!this.hot || event.once === undefined) return true;
    try {
      return await this.hot.setOnce(`webhook:${rec.id}:${event.once}`, CLAIM_TTL_MS);
    } catch {
      const now = Date.now();
      if (now - this.lastClaimFailureLog > 60_000) {
        this.lastClaimFailureLog = now;
        this.log?.warn('webhook delivery not claimed (redis unreachable): other nodes may deliver the same event too', { webhookId: rec.id, event: event.event });
      }
      return true;
    }
  }

  private async deliver(rec: WebhookRecord, event: AnyRouterEvent): Promise<void> {
    const busy = this.inFlight.get(rec.id) ?? 0;
    if (busy >= this.maxInFlight) return this.logDrop(rec.id);
    if (!(await this.claimed(rec, event))) return;
    this.inFlight.set(rec.id, busy + 1);
    try {
      const { result, attempts } = await withRetries(() => this.attempt(rec, event, 0), this.policy.retryDelaysMs, {
        signal: this.shutdown.signal,
        onAttempt: (r, n) => {
          if (!this.shutdown.signal.aborted) this.store.recordAttempt(rec.id, r.status, new Date().toISOString());
          this.remember(rec.id, event.event, n, r, false);
        },
        shouldRetry: () => !this.shutdown.signal.aborted && this.store.get(rec.id)?.enabled === 1,
      });
      if (this.shutdown.signal.aborted) return; // the database may already be closed
      this.store.recordOutcome(rec.id, result.ok);
      if (!result.ok) {
        this.log?.warn('webhook delivery failed', { webhookId: rec.id, kind: rec.kind, event: event.event, status: result.status, attempts, error: result.error });
      }
    } finally {
      const left = (this.inFlight.get(rec.id) ?? 1) - 1;
      if (left > 0) this.inFlight.set(rec.id, left);
      else this.inFlight.delete(rec.id);
    }
  }

  /** One attempt for one webhook: payload, signature, destination check, POST. Never throws. */
  private async attempt(rec: WebhookRecord, event: AnyRouterEvent, captureBytes: number): Promise<AttemptResult> {
    let url: string;
    let body: string;
    let secret: string;
    try {
      secret = this.store.secretOf(rec.id) ?? '';
      ({ url, body } = buildPayload(rec.kind, rec.url, event, {
        botToken: this.settings.get().telegramBotToken,
        apiBase: this.telegramApiBase ?? process.env.ROUTER_TELEGRAM_API_BASE ?? TELEGRAM_API_BASE,
      }));
      // Checked again at every attempt: the setting may have changed since create, and an IP literal never
      // goes through the resolver, so the vetted lookup alone would not see it.
      if (rec.kind !== 'telegram') this.checkDestination(rec.kind, url);
    } catch (err) {
      // Our own errors carry safe messages; anything else (a bug, odd event data) stays opaque.
      const safe = err instanceof DestinationError || err instanceof PayloadError || err instanceof SecretError;
      return failedAttempt(safe ? err.message : 'delivery could not be prepared');
    }
    const vet = rec.kind !== 'telegram' && this.checksDestinations;
    let dispatcher: Dispatcher = vet ? this.vetted : this.open;
    let headers = deliveryHeaders(event, body, secret);
    const proxied = outboundDispatcher(new URL(url).origin);
    if (proxied) {
      dispatcher = proxied;
      if (vet) {
        try {
          ({ url, headers } = await this.pinToPublic(url, headers));
        } catch (err) {
          if (err instanceof DestinationError) return failedAttempt(err.message);
          return failedAttempt(`network error (${(err as { code?: string }).code ?? 'DNS'})`, true);
        }
      }
    }
    return postOnce(url, body, headers, {
      dispatcher,
      timeoutMs: this.policy.timeoutMs,
      captureBytes,
      signal: this.shutdown.signal,
    });
  }

  /**
   * Through a proxy, the proxy would resolve the name, out of the vetted lookup's reach: resolve and check
   * it here and send to the checked address (Host header and TLS name stay the original), so the guard
   * still judges the final destination and a name cannot re-bind between check and connect.
   */
  private async pinToPublic(raw: string, headers: Record<string, string>): Promise<{ url: string; headers: Record<string, string> }> {
    const url = new URL(raw);
    const [first] = await resolvePublic(url.hostname, this.resolve);
    const host = url.host;
    url.hostname = first!.family === 6 ? `[${first!.address}]` : first!.address;
    return { url: url.toString(), headers: { ...headers, host } };
  }

  private logDrop(id: string): void {
    const now = Date.now();
    if (now - (this.lastDropLog.get(id) ?? 0) < 60_000) return;
    this.lastDropLog.set(id, now);
    this.log?.warn('webhook has too many deliveries in flight; dropping events for it', { webhookId: id, limit: this.maxInFlight });
  }
}
