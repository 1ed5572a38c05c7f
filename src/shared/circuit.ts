/**
 * How a provider's circuit reads in every display (CLI `providers list`, the TUI dashboard, the web Home
 * page): never "closed" while a model circuit of that provider is open. The provider's own circuit wins
 * when it is not closed; else open (or half-open) model circuits are counted; else closed.
 */
import type { BreakerState } from './records.js';

/** A breaker as `GET /api/resilience` lists it. */
export interface BreakerView {
  provider: string;
  model?: string | null;
  state: BreakerState;
  consecutiveFailures?: number;
  openUntil?: string | null;
}

export interface CircuitDisplay {
  /** The worst state among the provider's circuits (for a badge or colour). */
  state: BreakerState;
  /** `open`, `open 12s`, `half-open`, `1 model open`, `2 models half-open`, `closed`, `closed (2 fail)`. */
  text: string;
}

/** The circuit of one provider (as `provider` reads in the breaker list: a node's prefix). */
export function circuitDisplay(breakers: readonly BreakerView[], provider: string, opts: { now?: number; countdown?: boolean } = {}): CircuitDisplay {
  const own = breakers.find((b) => b.provider === provider && (b.model === undefined || b.model === null));
  if (own && own.state !== 'closed') {
    const left = own.state === 'open' && own.openUntil && opts.countdown ? ` ${Math.max(0, Math.ceil((Date.parse(own.openUntil) - (opts.now ?? Date.now())) / 1000))}s` : '';
    return { state: own.state, text: `${own.state}${left}` };
  }
  const models = breakers.filter((b) => b.provider === provider && b.model !== undefined && b.model !== null && b.state !== 'closed');
  if (models.length > 0) {
    const state: BreakerState = models.some((b) => b.state === 'open') ? 'open' : 'half-open';
    return { state, text: `${models.length} model${models.length === 1 ? '' : 's'} ${state}` };
  }
  const failures = own?.consecutiveFailures ?? 0;
  return { state: 'closed', text: failures > 0 ? `closed (${failures} fail)` : 'closed' };
}
