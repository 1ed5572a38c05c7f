import type { CacheKeyMode } from './key-modes.js';

/** What a request asked of the cache through its headers. */
export interface Directive {
  kind: 'use' | 'refresh' | 'bypass';
  /** The request opted in by itself (an explicit `x-router-cache`, or `Cache-Control: max-age=N`). */
  optIn: boolean;
  maxAgeMs?: number;
}

/** What the cache does for one request: look up a reply, store the upstream's reply. */
export interface CachePlan {
  read: boolean;
  write: boolean;
  maxAgeMs?: number;
}

/**
 * Reads the request's directive. `x-router-cache: use | refresh | bypass` wins; otherwise `Cache-Control`:
 * `no-store` = bypass, `no-cache` or `max-age=0` = refresh (neither opts in by itself, since generic HTTP
 * clients send them), `max-age=N` = use entries at most N seconds old (opts in). Unknown values are ignored.
 */
export function readDirective(headers: Headers | undefined): Directive | undefined {
  if (!headers) return undefined;
  const own = headers.get('x-router-cache')?.trim().toLowerCase();
  if (own === 'use' || own === 'on') return { kind: 'use', optIn: true };
  if (own === 'refresh') return { kind: 'refresh', optIn: true };
  if (own === 'bypass' || own === 'off') return { kind: 'bypass', optIn: true };
  const cc = headers.get('cache-control');
  if (!cc) return undefined;
  const tokens = cc.toLowerCase().split(',').map((t) => t.trim());
  if (tokens.includes('no-store')) return { kind: 'bypass', optIn: false };
  if (tokens.includes('no-cache')) return { kind: 'refresh', optIn: false };
  const maxAge = tokens.map((t) => /^max-age=(\d+)$/.exec(t)).find((m) => m);
  if (maxAge) {
    const seconds = Number(maxAge[1]);
    return seconds > 0 ? { kind: 'use', optIn: true, maxAgeMs: seconds * 1000 } : { kind: 'refresh', optIn: false };
  }
  return undefined;
}

/**
 * Combines the key's mode and the request's directive. A key in `request` mode caches only what opts in;
 * `always` caches everything unless the request opts out; `off` never. A streaming request may be served
 * from the cache but its reply is not stored.
 */
export function planFor(mode: CacheKeyMode, directive: Directive | undefined, stream: boolean): CachePlan | undefined {
  if (mode === 'off') return undefined;
  const kind = directive?.kind ?? (mode === 'always' ? 'use' : undefined);
  if (!kind || kind === 'bypass') return undefined;
  if (mode === 'request' && !directive?.optIn) return undefined;
  const plan: CachePlan = { read: kind === 'use', write: !stream, maxAgeMs: directive?.maxAgeMs };
  return plan.read || plan.write ? plan : undefined;
}
