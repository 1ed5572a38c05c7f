/**
 * Routing state shared across a cluster without touching the request path: cooldowns, open circuits and
 * conversation affinity stay in each node's memory (read there in O(1) as on one machine); a node that
 * learns a change publishes it and the others apply it when the message arrives (milliseconds on a LAN,
 * well within the 1 s the contract promises). Cooldowns and open circuits are also kept in Redis hashes
 * with their expiry, so a node that starts (or comes back after Redis was unreachable) loads the current
 * ones. Nothing here runs on one machine.
 */
import type { Logger } from '../logger.js';
import type { BreakerSnapshotEntry, CircuitBreakers } from '../routing/breaker.js';
import type { AffinityChange, ConversationAffinity } from '../routing/conversation.js';
import type { CooldownEntry, CooldownStore } from '../routing/cooldowns.js';
import type { HotMessage, HotState } from './port.js';

const ROUTING = 'routing';
const COOLDOWNS = 'cooldowns';
const CIRCUITS = 'circuits';

const field = (a: string, b?: string) => (b === undefined ? a : `${a}\u0000${b}`);

export interface SharedRoutingParts {
  cooldowns: CooldownStore;
  breakers: CircuitBreakers;
  conversations: ConversationAffinity;
}

/** Wires the parts to the hot state when it is shared; returns false (and does nothing) otherwise. */
export function shareRouting(parts: SharedRoutingParts, hot: HotState, log?: Logger): boolean {
  if (!hot.shared) return false;
  const { cooldowns, breakers, conversations } = parts;
  const failed = (what: string) => (err: unknown) => log?.warn(`shared ${what} not stored; other nodes learn it from the event only`, { error: String((err as Error)?.message ?? err) });

  cooldowns.listener = (change) => {
    hot.publish(ROUTING, { kind: 'cooldown', ...change });
    if (change.type === 'set') {
      const e = change.entry;
      hot.hashSet(COOLDOWNS, field(e.connectionId, e.model), JSON.stringify(e), e.until - Date.now()).catch(failed('cooldown'));
    } else if (change.model !== undefined) {
      hot.hashDel(COOLDOWNS, field(change.connectionId, change.model)).catch(failed('cooldown'));
    }
  };
  breakers.onStateChange((e) => {
    if (e.to === 'open') {
      const entry = breakers.entry(e.provider, e.model);
      if (!entry) return;
      hot.publish(ROUTING, { kind: 'circuit', entry });
      hot.hashSet(CIRCUITS, field(e.provider, e.model), JSON.stringify(entry), Math.max(1_000, entry.openUntil - Date.now())).catch(failed('circuit'));
    } else if (e.to === 'closed') {
      const entry: BreakerSnapshotEntry = { provider: e.provider, ...(e.model === undefined ? {} : { model: e.model }), state: 'closed', consecutiveFailures: 0, openUntil: 0 };
      hot.publish(ROUTING, { kind: 'circuit', entry });
      hot.hashDel(CIRCUITS, field(e.provider, e.model)).catch(failed('circuit'));
    }
  });
  conversations.listener = (change) => hot.publish(ROUTING, { kind: 'affinity', change });

  hot.subscribe(ROUTING, (m: HotMessage) => {
    if (m.kind === 'cooldown') {
      if (m.type === 'set') cooldowns.applyRemote(m.entry as CooldownEntry);
      else if (m.type === 'clear' && typeof m.connectionId === 'string') cooldowns.clearRemote(m.connectionId, typeof m.model === 'string' ? m.model : undefined);
    } else if (m.kind === 'circuit') {
      breakers.applyRemote(m.entry as BreakerSnapshotEntry);
    } else if (m.kind === 'affinity' && m.change && typeof m.change === 'object') {
      conversations.applyRemote(m.change as AffinityChange);
    }
  });

  const load = async () => {
    try {
      const [cool, circ] = await Promise.all([hot.hashAll(COOLDOWNS), hot.hashAll(CIRCUITS)]);
      for (const v of Object.values(cool)) cooldowns.applyRemote(JSON.parse(v) as CooldownEntry);
      for (const v of Object.values(circ)) breakers.applyRemote(JSON.parse(v) as BreakerSnapshotEntry);
    } catch (err) {
      log?.warn('could not load shared cooldowns and circuits; loaded when redis is reachable', { error: String((err as Error).message) });
    }
  };
  hot.onHealth((h) => {
    if (h.healthy) void load();
  });
  if (hot.health().healthy) void load();
  return true;
}
