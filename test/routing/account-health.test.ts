import { describe, expect, it } from 'vitest';
import { AccountHealth, BASE_DEMOTION_MS, DEMOTE_AFTER_FAILURES, MAX_DEMOTION_MS } from '../../src/daemon/routing/account-health.js';
import { AccountSelector } from '../../src/daemon/routing/accounts.js';
import { CooldownStore } from '../../src/daemon/routing/cooldowns.js';
import { SessionAffinity } from '../../src/daemon/routing/session-affinity.js';

function setup() {
  let now = 1_000_000;
  const clock = () => now;
  const health = new AccountHealth({ now: clock });
  const selector = new AccountSelector({ cooldowns: new CooldownStore({ now: clock }), affinity: new SessionAffinity({ now: clock }), health });
  selector.setConnections('p', [
    { id: 'a', priority: 1 },
    { id: 'b', priority: 2 },
    { id: 'c', priority: 3 },
  ]);
  const ids = (opts = {}) => selector.order('p', 'm', opts).map((c) => c.id);
  return { health, selector, ids, advance: (ms: number) => (now += ms) };
}

describe('account demotion', () => {
  it(`keeps a failing account first until its ${DEMOTE_AFTER_FAILURES}rd failure in a row, then tries it last`, () => {
    const { health, ids } = setup();
    for (let i = 1; i < DEMOTE_AFTER_FAILURES; i++) {
      expect(health.failed('a', 'm')).toBe(false);
      expect(ids()).toEqual(['a', 'b', 'c']);
    }
    expect(health.failed('a', 'm')).toBe(true);
    expect(ids()).toEqual(['b', 'c', 'a']);
    // Per model: another model of the same account keeps its place.
    expect(ids().length).toBe(3);
    expect(health.isDemoted('a', 'other')).toBe(false);
  });

  it('a success ends the streak', () => {
    const { health, ids } = setup();
    health.failed('a', 'm');
    health.failed('a', 'm');
    health.succeeded('a', 'm');
    health.failed('a', 'm');
    expect(ids()).toEqual(['a', 'b', 'c']);
    for (let i = 0; i < DEMOTE_AFTER_FAILURES; i++) health.failed('a', 'm');
    health.succeeded('a', 'm');
    expect(ids()).toEqual(['a', 'b', 'c']);
    expect(health.active).toBe(false);
  });

  it('a model-access failure demotes at once', () => {
    const { health, ids } = setup();
    expect(health.failed('b', 'm', true)).toBe(true);
    expect(ids()).toEqual(['a', 'c', 'b']);
  });

  it('never excludes: with every account demoted, the strategy order stands', () => {
    const { health, ids } = setup();
    for (const id of ['a', 'b', 'c']) health.failed(id, 'm', true);
    expect(ids()).toEqual(['a', 'b', 'c']);
  });

  it('a demotion ends after its time, doubles on the next failure of the same streak, and is capped', () => {
    const { health, ids, advance } = setup();
    for (let i = 0; i < DEMOTE_AFTER_FAILURES; i++) health.failed('a', 'm');
    advance(BASE_DEMOTION_MS - 1);
    expect(ids()[0]).toBe('b');
    advance(1);
    expect(ids()[0]).toBe('a');
    expect(health.active).toBe(false);
    // One more failure demotes again at once, for twice as long.
    expect(health.failed('a', 'm')).toBe(true);
    advance(2 * BASE_DEMOTION_MS - 1);
    expect(ids()[0]).toBe('b');
    advance(1);
    expect(ids()[0]).toBe('a');
    for (let i = 0; i < 20; i++) {
      health.failed('a', 'm');
      advance(MAX_DEMOTION_MS);
      expect(ids()[0]).toBe('a');
    }
    expect(health.list()).toEqual([]);
  });

  it('a sticky session leaves a demoted account', () => {
    const { health, selector, ids } = setup();
    selector.recordUse('p', 'a', 's1');
    expect(ids({ sessionKey: 's1' })[0]).toBe('a');
    health.failed('a', 'm', true);
    expect(ids({ sessionKey: 's1' })).toEqual(['b', 'c', 'a']);
  });

  it('lists demoted accounts with the time left', () => {
    const { health } = setup();
    health.failed('c', 'm', true);
    expect(health.list()).toEqual([{ connectionId: 'c', model: 'm', failures: 1, remainingSeconds: BASE_DEMOTION_MS / 1000 }]);
  });
});
