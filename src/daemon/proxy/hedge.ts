import { AttemptError } from './upstream-error.js';

/**
 * A combo's hedged request (`hedgeAfterMs`): the attempts running side by side for one request. Each
 * attempt enters the race when it is sent and claims it when its first byte is ready for the client (a
 * stream's first content, a whole JSON reply), before writing anything or recording its usage. The first
 * claim wins; every other attempt is cancelled at once (its exchange aborted, its usage row recorded as
 * cancelled, nothing billed), and a later claim is refused.
 */
export class HedgeRace {
  private readonly entries: RaceEntry[] = [];
  private winner: RaceEntry | undefined;

  /** Whether an attempt has claimed the race. */
  get decided(): boolean {
    return this.winner !== undefined;
  }

  /** A new runner; `onLost` is called once, synchronously, when another runner wins. */
  enter(onLost: () => void): RaceEntry {
    const entry = new RaceEntry(this, onLost);
    this.entries.push(entry);
    return entry;
  }

  /** @internal */
  claim(entry: RaceEntry): boolean {
    if (this.winner !== undefined) return this.winner === entry;
    this.winner = entry;
    for (const other of this.entries) if (other !== entry) other.lose();
    return true;
  }

  /** Ends the race: every runner that has not won is cancelled (the request ended another way). */
  end(): void {
    for (const entry of this.entries) if (entry !== this.winner) entry.lose();
  }

  /** @internal */
  leave(entry: RaceEntry): void {
    const i = this.entries.indexOf(entry);
    if (i >= 0) this.entries.splice(i, 1);
  }
}

/** One attempt's place in a {@link HedgeRace}. */
export class RaceEntry {
  lost = false;
  private abort: (() => void) | undefined;

  constructor(
    private readonly race: HedgeRace,
    private readonly onLost: () => void,
  ) {}

  /** The attempt's way to end its exchange (its AttemptGuard); called at once if the race is already lost. */
  bind(abort: () => void): void {
    this.abort = abort;
    if (this.lost) abort();
  }

  /** Claims the race before the first byte goes to the client; throws the hedge-lost error if another won. */
  claim(): void {
    if (!this.race.claim(this)) throw hedgeLostError();
  }

  /** The attempt ended (failed) before claiming: it no longer takes part. */
  leave(): void {
    this.race.leave(this);
  }

  /** @internal Another attempt won: record and cancel this one. */
  lose(): void {
    if (this.lost) return;
    this.lost = true;
    this.onLost();
    this.abort?.();
  }
}

/** The failure of a hedged attempt that another target beat to the first byte (not the provider's fault). */
export function hedgeLostError(): AttemptError {
  return new AttemptError('Hedged request: another target answered first; this attempt was cancelled.', 499, 'hedge_lost');
}
