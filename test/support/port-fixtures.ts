import { randomUUID } from 'node:crypto';
import { SqlKeyRepository } from '../../src/daemon/keys/sql-repository.js';
import type { ChangeFeed } from '../../src/daemon/store/changes.js';
import type { SqlDriver } from '../../src/daemon/store/driver.js';

/** Inserts an API key row (records that reference api_keys need one) and returns its id. */
export async function insertKeyRow(driver: SqlDriver): Promise<string> {
  const id = randomUUID();
  await new SqlKeyRepository(driver).insert({
    id,
    name: `key-${id.slice(0, 4)}`,
    maskedKey: 'rk_abcd...wxyz',
    scopes: ['proxy'],
    isActive: true,
    createdAt: '2026-01-01T00:00:00.000Z',
    lastUsedAt: null,
    dailyRequestLimit: null,
    tokenLimits: [],
    budget: null,
    keyHash: Buffer.from(randomUUID().replaceAll('-', '').repeat(2), 'hex'),
  });
  return id;
}

/**
 * Change feeds of `n` nodes that hear each other, as the cluster's feed does: a topic published on one node
 * calls the subscribers of every other node (never its own), after the publishing call returns.
 */
export function linkedFeeds(n: number): ChangeFeed[] {
  const subscribers = Array.from({ length: n }, () => new Map<string, Set<() => void | Promise<void>>>());
  return subscribers.map((own, i) => ({
    publish(topic: string) {
      for (const [j, other] of subscribers.entries()) {
        if (j === i) continue;
        for (const fn of other.get(topic) ?? []) queueMicrotask(() => void fn());
      }
    },
    subscribe(topic: string, fn: () => void | Promise<void>) {
      const set = own.get(topic) ?? new Set();
      own.set(topic, set);
      set.add(fn);
      return () => set.delete(fn);
    },
  }));
}

/**
 * Like `linkedFeeds`, for stores whose notice callback returns their reload: `delivered()` waits for every
 * callback called so far, so a test reads the other node's snapshot without polling.
 */
export function sharedFeed(): { feed: () => ChangeFeed; delivered: () => Promise<void> } {
  const subs: Array<{ owner: object; topic: string; fn: () => unknown }> = [];
  const pending: Promise<unknown>[] = [];
  return {
    feed() {
      const owner = {};
      return {
        publish(topic) {
          for (const s of subs) if (s.owner !== owner && s.topic === topic) pending.push(Promise.resolve().then(s.fn));
        },
        subscribe(topic, fn) {
          const sub = { owner, topic, fn };
          subs.push(sub);
          return () => subs.splice(subs.indexOf(sub), 1);
        },
      };
    },
    async delivered() {
      await Promise.all(pending.splice(0));
    },
  };
}
