import type { ServerResponse } from 'node:http';
import { AttemptError, networkAttemptError } from './upstream-error.js';
import { hedgeLostError, type RaceEntry } from './hedge.js';
import type { MidStreamRecovery } from '../../shared/records.js';
import type { Target } from '../providers/target.js';
import type { Plan } from './plan.js';
import type { UpstreamReply } from '../net/upstream.js';

/** Limits of one attempt, ms from its start. */
export interface AttemptLimits {
  /** Until the upstream's first byte: the reply's headers, or a stream's first content (its commit). */
  firstByteMs: number;
  /** The whole attempt: the request deadline's remainder, or a combo's per-target timeout if shorter. */
  totalMs: number;
  /**
   * Under a combo's hedging: this attempt's place in the race. The attempt claims it right before its first
   * byte goes to the client (or its usage is recorded); losing it aborts the exchange at once.
   */
  race?: RaceEntry;
  /** Under a combo's midStreamRecovery: its mode, and the plan's targets after this one (for `continue`). */
  recovery?: { mode: MidStreamRecovery; rest: readonly Target[]; plan: Plan };
}

/**
 * Ends one upstream exchange when nobody wants its reply any more: when the first-byte or total timeout
 * passes, or when the client closes its connection before the reply reached it. Both abort the exchange
 * at once, whatever its reader is doing, so its socket goes back (closed) and no handler waits on a hung
 * upstream that the client left. One timer and one 'close' listener per attempt; `dispose()` removes both.
 */
export class AttemptGuard {
  timedOut = false;
  clientGone = false;
  lost = false;
  private timer?: NodeJS.Timeout;
  private readonly t0 = performance.now();
  private readonly onClose = (): void => {
    if (this.sink?.writableEnded) return;
    this.clientGone = true;
    this.exchange.abort();
  };

  constructor(
    private readonly exchange: Pick<UpstreamReply, 'abort'>,
    private readonly sink: ServerResponse | undefined,
    private readonly limits: AttemptLimits,
  ) {
    this.arm(Math.min(limits.firstByteMs, limits.totalMs));
    limits.race?.bind(() => {
      this.lost = true;
      this.exchange.abort();
    });
    if (sink) {
      if (sink.destroyed) this.onClose();
      else sink.once('close', this.onClose);
    }
  }

  /** The first byte arrived: from now on only the total limit applies. */
  firstByte(): void {
    if (this.limits.firstByteMs >= this.limits.totalMs) return;
    this.arm(this.limits.totalMs - (performance.now() - this.t0));
  }

  /** The failure this guard caused, if any: the client leaving (wins: nothing is retried), or a timeout. */
  cause(): AttemptError | undefined {
    if (this.clientGone) return clientGoneError();
    if (this.lost) return hedgeLostError();
    if (this.timedOut) return networkAttemptError(undefined, true);
    return undefined;
  }

  dispose(): void {
    clearTimeout(this.timer);
    this.sink?.off('close', this.onClose);
  }

  private arm(ms: number): void {
    clearTimeout(this.timer);
    if (!Number.isFinite(ms)) return;
    this.timer = setTimeout(() => {
      this.timedOut = true;
      this.exchange.abort();
    }, Math.max(0, ms));
  }
}

/** The client closed its connection before the reply: recorded as 499 (nginx's "client closed request"). */
export function clientGoneError(): AttemptError {
  return new AttemptError('The client closed the connection before the reply.', 499, 'client_gone');
}
