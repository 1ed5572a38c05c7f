import { beforeEach, describe, expect, it } from 'vitest';
import { type AccountConnection, AccountSelector } from '../../src/daemon/routing/accounts.js';
import { ANY_MODEL, CooldownStore } from '../../src/daemon/routing/cooldowns.js';
import { SessionAffinity } from '../../src/daemon/routing/session-affinity.js';

const T0 = 1_700_000_000_000;
const CONNS: readonly AccountConnection[] = [
  { id: 'low', priority: 3 },
  { id: 'top', priority: 1 },
  { id: 'mid', priority: 2 },
  { id: 'none' },
];
const ids = (list: readonly AccountConnection[]) => list.map((c) => c.id);

describe('AccountSelector', () => {
  let now: number;
  let cooldowns: CooldownStore;
  let affinity: SessionAffinity;
  let selector: AccountSelector;

  beforeEach(() => {
    now = T0;
    cooldowns = new CooldownStore({ now: () => now });
    affinity = new SessionAffinity({ now: () => now, ttlMs: 60_000, maxEntries: 100 });
    selector = new AccountSelector({ cooldowns, affinity });
    selector.setConnections('openai', CONNS);
  });

  it('returns nothing for an unknown provider', () => {
    expect(selector.order('nope', 'm')).toEqual([]);
  });

  it('fill-first orders by priority (missing priority last) and sticks to the first', () => {
    expect(ids(selector.order('openai', 'm'))).toEqual(['top', 'mid', 'low', 'none']);
    expect(ids(selector.order('openai', 'm', { strategy: 'fill-first' }))).toEqual(['top', 'mid', 'low', 'none']);
  });

  it('fill-first moves on when the first cools down for the model, and back when it recovers', () => {
    cooldowns.set('top', 'm', 30, '429');
    expect(ids(selector.order('openai', 'm'))).toEqual(['mid', 'low', 'none']);
    expect(ids(selector.order('openai', 'other-model'))[0]).toBe('top');
    now += 30_000;
    expect(ids(selector.order('openai', 'm'))[0]).toBe('top');
  });

  it('skips inactive connections and any-model cooldowns', () => {
    selector.setConnections('p', [
      { id: 'a', priority: 1, active: false },
      { id: 'b', priority: 2 },
      { id: 'c', priority: 3 },
    ]);
    cooldowns.set('b', ANY_MODEL, 60, 'auth');
    expect(ids(selector.order('p', 'm'))).toEqual(['c']);
    cooldowns.set('c', 'm', 60, '429');
    expect(selector.order('p', 'm')).toEqual([]);
  });

  it('round-robin rotates the primary over the available connections', () => {
    const primaries = Array.from({ length: 5 }, () => selector.order('openai', 'm', { strategy: 'round-robin' })[0]!.id);
    expect(primaries).toEqual(['top', 'mid', 'low', 'none', 'top']);
    expect(ids(selector.order('openai', 'm', { strategy: 'round-robin' }))).toEqual(['mid', 'low', 'none', 'top']);
  });

  it('round-robin shares evenly among the connections still available', () => {
    cooldowns.set('mid', 'm', 600, '429');
    cooldowns.set('low', 'm', 600, '429');
    const counts: Record<string, number> = {};
    for (let i = 0; i < 100; i++) {
      const id = selector.order('openai', 'm', { strategy: 'round-robin' })[0]!.id;
      counts[id] = (counts[id] ?? 0) + 1;
    }
    expect(counts).toEqual({ top: 50, none: 50 });
  });

  it('least-used prefers the connection with the fewest recorded uses, ties in priority order', () => {
    selector.recordUse('openai', 'top');
    selector.recordUse('openai', 'top');
    selector.recordUse('openai', 'mid');
    expect(ids(selector.order('openai', 'm', { strategy: 'least-used' }))).toEqual(['low', 'none', 'mid', 'top']);
    expect(selector.usageOf('openai', 'top')).toBe(2);
  });

  it('a connection added later starts at the current minimum usage', () => {
    for (const id of ['top', 'mid', 'low', 'none']) for (let i = 0; i < 5; i++) selector.recordUse('openai', id);
    selector.setConnections('openai', [...CONNS, { id: 'new', priority: 0 }]);
    expect(selector.usageOf('openai', 'new')).toBe(5);
    expect(selector.usageOf('openai', 'top')).toBe(5);
    selector.setConnections('openai', [{ id: 'top', priority: 1 }]);
    expect(selector.usageOf('openai', 'mid')).toBe(0);
  });

  it('ignores uses of unknown connections', () => {
    selector.recordUse('openai', 'ghost', 's1');
    selector.recordUse('nope', 'top', 's1');
    expect(selector.usageOf('openai', 'ghost')).toBe(0);
    expect(affinity.get('openai', 's1')).toBeUndefined();
  });

  describe('session stickiness', () => {
    it('keeps a session on the connection it used last, over the strategy', () => {
      selector.recordUse('openai', 'low', 'sess-1');
      expect(ids(selector.order('openai', 'm', { sessionKey: 'sess-1' }))).toEqual(['low', 'top', 'mid', 'none']);
      expect(selector.order('openai', 'm', { strategy: 'round-robin', sessionKey: 'sess-1' })[0]!.id).toBe('low');
      expect(selector.order('openai', 'm', { sessionKey: 'other' })[0]!.id).toBe('top');
    });

    it('releases the binding when the sticky connection cools down, then rebinds on next use', () => {
      selector.recordUse('openai', 'low', 'sess-1');
      cooldowns.set('low', 'm', 60, '429');
      expect(ids(selector.order('openai', 'm', { sessionKey: 'sess-1' }))).toEqual(['top', 'mid', 'none']);
      expect(affinity.get('openai', 'sess-1')).toBeUndefined();
      selector.recordUse('openai', 'top', 'sess-1');
      now += 60_000; // 'low' is usable again but the session stays where it moved
      expect(selector.order('openai', 'm', { sessionKey: 'sess-1' })[0]!.id).toBe('top');
    });

    it('releases the binding when the sticky connection is removed or deactivated', () => {
      selector.recordUse('openai', 'mid', 's');
      selector.setConnections('openai', CONNS.map((c) => (c.id === 'mid' ? { ...c, active: false } : c)));
      expect(selector.order('openai', 'm', { sessionKey: 's' })[0]!.id).toBe('top');
      expect(affinity.get('openai', 's')).toBeUndefined();
    });

    it('forgets a session after its TTL and is scoped per provider', () => {
      selector.setConnections('anthropic', [{ id: 'x' }, { id: 'y' }]);
      selector.recordUse('openai', 'low', 's');
      selector.recordUse('anthropic', 'y', 's');
      expect(selector.order('anthropic', 'm', { sessionKey: 's' })[0]!.id).toBe('y');
      now += 59_999;
      expect(selector.order('openai', 'm', { sessionKey: 's' })[0]!.id).toBe('low');
      now += 60_000; // TTL slides on use: the previous order() read did not refresh it, recordUse does
      expect(selector.order('openai', 'm', { sessionKey: 's' })[0]!.id).toBe('top');
    });

    it('works without an affinity store', () => {
      const plain = new AccountSelector({ cooldowns });
      plain.setConnections('p', CONNS);
      plain.recordUse('p', 'low', 's');
      expect(plain.order('p', 'm', { sessionKey: 's' })[0]!.id).toBe('top');
    });
  });
});

describe('SessionAffinity', () => {
  it('is bounded: the least recently used session is forgotten first', () => {
    let now = 0;
    const affinity = new SessionAffinity({ maxEntries: 2, now: () => now });
    affinity.bind('p', 'a', 'c1');
    affinity.bind('p', 'b', 'c2');
    affinity.get('p', 'a');
    affinity.bind('p', 'c', 'c3');
    expect(affinity.get('p', 'b')).toBeUndefined();
    expect(affinity.get('p', 'a')).toBe('c1');
    expect(affinity.size).toBe(2);
    now += 3_600_000;
    expect(affinity.get('p', 'a')).toBeUndefined();
  });
});
