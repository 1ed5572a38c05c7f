/**
 * Session stickiness: remembers which connection served a session last so the next request of the same
 * session goes there and the provider's prompt cache stays warm. Bounded LRU with a sliding TTL.
 */
import { type Clock, systemClock } from './clock.js';
import { LruMap } from './lru.js';

/** Tunables for {@link SessionAffinity}. */
export interface SessionAffinityOptions {
  /** Sessions remembered; the least recently used is forgotten beyond this. Default 10,000. */
  maxEntries?: number;
  /** A session unused for this long is forgotten. Default 1 hour. */
  ttlMs?: number;
  now?: Clock;
}

interface Binding {
  connectionId: string;
  expiresAt: number;
}

/** Maps (scope, session key) to the connection used last. All operations are O(1). */
export class SessionAffinity {
  private readonly bindings: LruMap<string, Binding>;
  private readonly ttlMs: number;
  private readonly now: Clock;

  constructor(options: SessionAffinityOptions = {}) {
    this.bindings = new LruMap(options.maxEntries ?? 10_000);
    this.ttlMs = options.ttlMs ?? 3_600_000;
    this.now = options.now ?? systemClock;
  }

  /** The connection bound to the session, if the binding is still fresh. */
  get(scope: string, sessionKey: string): string | undefined {
    const key = keyOf(scope, sessionKey);
    const binding = this.bindings.get(key);
    if (!binding) return undefined;
    if (binding.expiresAt <= this.now()) {
      this.bindings.delete(key);
      return undefined;
    }
    return binding.connectionId;
  }

  /** Binds the session to a connection (or refreshes the binding), restarting its TTL. */
  bind(scope: string, sessionKey: string, connectionId: string): void {
    this.bindings.set(keyOf(scope, sessionKey), { connectionId, expiresAt: this.now() + this.ttlMs });
  }

  /** Forgets one session's binding. */
  release(scope: string, sessionKey: string): void {
    this.bindings.delete(keyOf(scope, sessionKey));
  }

  /** Number of bindings held (expired ones included until touched or evicted). */
  get size(): number {
    return this.bindings.size;
  }
}

const keyOf = (scope: string, sessionKey: string): string => `${scope}\u0000${sessionKey}`;
