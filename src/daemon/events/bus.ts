import type { AnyRouterEvent, EventMap, EventName, RouterEvent } from './types.js';

/** A listener for one event. Its return value is ignored; a returned promise's rejection is caught. */
export type EventListener<N extends EventName> = (event: RouterEvent<N>) => unknown;

/** A listener for every event. */
export type AnyEventListener = (event: AnyRouterEvent) => unknown;

interface AnyEntry {
  listener: AnyEventListener;
  wants?: (name: EventName) => boolean;
}

/** Called when a listener throws or rejects; the default is to drop the error. */
export type ListenerErrorHandler = (error: unknown, event: AnyRouterEvent) => void;

/**
 * Typed in-process pub/sub. The proxy hot path emits, so `emit` is synchronous and cheap: with no listener
 * it returns before allocating anything, listeners are kept in copy-on-write arrays (emit iterates without
 * copying, and a listener that unsubscribes during emit does not disturb the loop), and a listener's error
 * never reaches the emitter. Listeners that do real work (webhook delivery) must defer it themselves.
 */
export class EventBus {
  private readonly byName = new Map<EventName, ReadonlyArray<EventListener<any>>>();
  private any: ReadonlyArray<AnyEntry> = [];

  /** Turns stored provider ids into the names people read (a node's prefix); set once the directory exists. */
  private label?: (id: string) => string;

  constructor(private readonly onListenerError: ListenerErrorHandler = () => {}) {}

  /**
   * Events name providers the way people read them: `provider` is a node's prefix (not its UUID), and
   * `provider_id` keeps the stored id. Set by boot once the provider directory exists.
   */
  labelProviders(label: (id: string) => string): void {
    this.label = label;
  }

  /** Subscribes to one event; returns the unsubscribe function. */
  on<N extends EventName>(name: N, listener: EventListener<N>): () => void {
    this.byName.set(name, [...(this.byName.get(name) ?? []), listener]);
    return () => {
      const rest = (this.byName.get(name) ?? []).filter((l) => l !== listener);
      if (rest.length) this.byName.set(name, rest);
      else this.byName.delete(name);
    };
  }

  /**
   * Subscribes to every event; returns the unsubscribe function. `wants` narrows that to the events the
   * listener can use right now (the webhook dispatcher: events some enabled webhook subscribes to), so
   * emitting an event nobody wants builds nothing (no event object, no timestamp, no data).
   */
  onAny(listener: AnyEventListener, wants?: (name: EventName) => boolean): () => void {
    const entry: AnyEntry = { listener, wants };
    this.any = [...this.any, entry];
    return () => {
      this.any = this.any.filter((l) => l !== entry);
    };
  }

  /** True when someone listens to `name` (lets emitters skip building expensive data). */
  hasListeners(name: EventName): boolean {
    if (this.byName.has(name)) return true;
    for (const a of this.any) if (!a.wants || a.wants(name)) return true;
    return false;
  }

  /**
   * Emits synchronously to every listener of `name`, then to every any-listener that wants it. Never throws.
   * `once` names a happening other cluster nodes may emit too (see RouterEvent.once).
   */
  emit<N extends EventName>(name: N, data: EventMap[N], once?: string): void {
    const named = this.byName.get(name);
    if (!named && !this.hasListeners(name)) return;
    const provider = (data as { provider?: unknown }).provider;
    if (this.label && 'provider' in data && (data as { provider_id?: unknown }).provider_id === undefined) {
      data = { ...data, provider: typeof provider === 'string' ? this.label(provider) : provider, provider_id: provider } as EventMap[N];
    }
    const event = (once === undefined ? { event: name, timestamp: new Date().toISOString(), data } : { event: name, timestamp: new Date().toISOString(), data, once }) as RouterEvent<N>;
    if (named) for (const listener of named) this.call(listener, event);
    for (const a of this.any) if (!a.wants || a.wants(name)) this.call(a.listener as EventListener<N>, event);
  }

  /** Removes every listener (shutdown). */
  clear(): void {
    this.byName.clear();
    this.any = [];
  }

  private call<N extends EventName>(listener: EventListener<N>, event: RouterEvent<N>): void {
    try {
      const result = listener(event);
      if (result && typeof (result as PromiseLike<unknown>).then === 'function') {
        // An async listener's rejection would otherwise become an unhandled rejection and end the process.
        (result as Promise<unknown>).then(undefined, (err) => this.report(err, event));
      }
    } catch (err) {
      this.report(err, event);
    }
  }

  private report(error: unknown, event: RouterEvent<any>): void {
    try {
      this.onListenerError(error, event as AnyRouterEvent);
    } catch {
      // the error handler itself failed: nothing sensible is left to do, and the emitter must not see it
    }
  }
}
