import type { Logger } from '../logger.js';
import type { ProviderDirectory } from '../providers/directory.js';
import { canRefresh, refreshConnection, REFRESH_AHEAD_MS, type RefreshDeps } from '../oauth/refresh.js';

const TICK_MS = 60_000;

/**
 * Proactive OAuth refresh: every minute, active OAuth connections whose access token expires within
 * REFRESH_AHEAD_MS are refreshed. A failed proactive refresh is recorded in `lastError` and retried on the
 * next tick; it never marks a connection expired (spec: transient refresh failures must not disable
 * working accounts; only an upstream-confirmed auth failure does).
 */
export class TokenRefresher {
  private timer?: NodeJS.Timeout;

  constructor(
    private readonly deps: RefreshDeps,
    private readonly providers: ProviderDirectory,
    private readonly log: Logger,
    private readonly now: () => number = Date.now,
  ) {}

  start(): void {
    this.timer = setInterval(() => void this.tick(), TICK_MS);
    this.timer.unref();
    void this.tick();
  }

  /** One pass; returns how many connections were refreshed. */
  async tick(): Promise<number> {
    let refreshed = 0;
    for (const c of this.deps.connections.list()) {
      if (!c.isActive || !c.expiresAt) continue;
      const def = this.providers.provider(c.provider);
      if (!canRefresh(def, c, this.deps.settings)) continue;
      if (Date.parse(c.expiresAt) - this.now() > REFRESH_AHEAD_MS) continue;
      try {
        await refreshConnection(def!, c, this.deps);
        refreshed++;
      } catch (err) {
        await this.deps.connections.update(c.id, { lastError: (err as Error).message }).catch(() => undefined);
        this.log.warn('proactive token refresh failed; will retry', { connection: c.name, connectionId: c.id, error: (err as Error).message });
      }
    }
    return refreshed;
  }

  stop(): void {
    clearInterval(this.timer);
  }
}
