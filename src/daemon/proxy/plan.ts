import { badRequest, RouterError } from '../http/errors.js';
import { modelHint } from '../providers/model-hint.js';
import { conversationOf, targetKey, type HeaderGetter } from '../routing/conversation.js';
import { circuitOpenError, modelCooldownError } from '../routing/errors.js';
import type { ComboAffinity, MidStreamRecovery } from '../../shared/records.js';
import { orderTargets } from '../routing/strategies.js';
import type { PipelineDeps } from './deps.js';
import type { Target } from '../providers/target.js';

/** Nesting limit of combos referencing combos (also enforced when combos are saved). */
export const MAX_COMBO_DEPTH = 4;

/** A combo as routing reads it. */
export interface PlannedCombo {
  id: string;
  name: string;
  targetTimeoutMs: number | null;
  affinity: ComboAffinity;
  /** Hedged requests: the next target starts too after this many ms without a byte; null: off. */
  hedgeAfterMs: number | null;
  /** A stream cut or stalled after its first byte: the client's error event, or continued on the next target. */
  midStreamRecovery: MidStreamRecovery | null;
  /** Targets whose context window cannot hold the request are left out (proxy/context-fit.ts). */
  contextFit: boolean;
}

/** Where a conversation id can be read from: the request's headers and body (read only under a combo's affinity). */
export interface ConversationSource {
  requestHeaders?: HeaderGetter;
  call: { raw: Record<string, unknown> };
}

/** The targets to try for one request, in order, and why some were left out. */
export interface Plan {
  combo?: PlannedCombo;
  targets: Target[];
  /** When no target is left: the error explaining why (all cooling down, circuit open). */
  unavailable?: RouterError;
  /** Why the strategy's first choice was left out, when it was (the `combo.switched` reason). */
  leadSkipped?: 'circuit_open' | 'cooldown';
  /**
   * The request's session: its X-Router-Session(-Id) header or, under a combo's affinity, the conversation
   * derived from the client's markers or prompt prefix (routing/conversation.ts). Accounts bind to it.
   */
  session?: string;
}

interface Collect {
  targets: Target[];
  skipped: RouterError[];
  /** The first error skipped before any target was collected. */
  lead?: RouterError;
}

function skip(acc: Collect, err: RouterError): void {
  acc.skipped.push(err);
  if (acc.targets.length === 0) acc.lead ??= err;
}

/**
 * Resolves the model a client named into the ordered targets to try: `<provider>/<model>` (one target per
 * usable account, in account-strategy order) or a combo name (its entries in strategy order, each expanded
 * the same way, combos nested up to MAX_COMBO_DEPTH). Providers whose circuit is open and accounts cooling
 * down for the model are left out. An unknown model is a 404, never routed to a default (spec, proxy endpoints: an unrecognized model is never defaulted to another provider).
 */
export function planTargets(services: PipelineDeps, model: unknown, sessionKey?: string, source?: ConversationSource): Plan {
  if (typeof model !== 'string' || model.trim() === '') throw badRequest("The 'model' field is required.", 'model');
  if (model.length > 512) throw badRequest("The 'model' field is too long.", 'model');
  const acc: Collect = { targets: [], skipped: [] };
  const combo = services.combos.byName(model);
  let session = sessionKey;
  // Cache affinity: the conversation is named only for a combo that asks (nothing is read or hashed otherwise).
  if (combo && combo.affinity !== 'off' && source) {
    session = conversationOf(combo.affinity, source.requestHeaders, source.call.raw, services.resilience.conversations.chains) ?? sessionKey;
  }
  if (combo) expandCombo(services, model, acc, session, 0, new Set());
  else providerTargets(services, model, acc, session);
  const plan: Plan = { targets: acc.targets };
  if (session !== undefined) plan.session = session;
  if (combo) {
    plan.combo = {
      id: combo.id,
      name: combo.name,
      targetTimeoutMs: combo.targetTimeoutMs ?? null,
      affinity: combo.affinity,
      hedgeAfterMs: combo.hedgeAfterMs,
      midStreamRecovery: combo.midStreamRecovery,
      contextFit: combo.contextFit,
    };
    if (combo.affinity !== 'off' && session !== undefined && acc.targets.length > 1) pinConversation(services, combo.id, session, acc.targets);
  }
  if (acc.targets.length === 0) plan.unavailable = acc.skipped[0] ?? new RouterError(503, `No target of '${model}' is usable.`);
  // Account `least-used` counts the account a request is planned to go to first (not replies, which
  // arrive too late for a burst planned together).
  const first = acc.targets[0];
  if (first?.connectionId) services.resilience.accounts.countUse(first.provider.id, first.connectionId);
  if (acc.lead?.code === 'provider_circuit_open') plan.leadSkipped = 'circuit_open';
  else if (acc.lead?.code === 'model_cooldown') plan.leadSkipped = 'cooldown';
  return plan;
}

/**
 * Puts the target a conversation was served by first, whatever the strategies chose, while it is usable:
 * a target cooling down, behind an open circuit or on an inactive account is not in the list, and one the
 * account's failure streak demoted is let go; the conversation then follows the order and binds to the
 * target that serves it (resilience/attempts.ts), where it stays.
 */
function pinConversation(services: PipelineDeps, comboId: string, conversation: string, targets: Target[]): void {
  const r = services.resilience;
  const bound = r.conversations.bound(comboId, conversation);
  if (bound === undefined) return;
  const index = targets.findIndex((t) => targetKey(t) === bound);
  if (index === -1) return;
  const target = targets[index]!;
  if (target.connectionId !== undefined && r.health.isDemoted(target.connectionId, target.model)) {
    r.conversations.release(comboId, conversation);
    return;
  }
  if (index > 0) targets.unshift(...targets.splice(index, 1));
}

/** The 404 for a model name that names nothing, with "did you mean" when something is close. */
export function unknownModel(services: Pick<PipelineDeps, 'providers' | 'combos'>, model: string): RouterError {
  const hint = modelHint(services.providers, services.combos.list().map((c) => c.name), model);
  return new RouterError(404, `Unknown model '${model}': use <provider>/<model> or a combo name (GET /v1/models lists them).${hint}`, {
    code: 'model_not_found',
  });
}

function expandCombo(services: PipelineDeps, name: string, acc: Collect, sessionKey: string | undefined, depth: number, seen: Set<string>): void {
  const combo = services.combos.byName(name)!;
  if (depth >= MAX_COMBO_DEPTH || seen.has(combo.id)) return;
  seen.add(combo.id);
  const r = services.resilience;
  const entries = combo.models.map((m, i) => ({ id: `${combo.id}#${i}`, model: m.model, weight: m.weight }));
  const ordered = orderTargets(combo.strategy, entries, {
    state: r.comboState(combo.id),
    usageCount: (id) => r.comboUsage.get(id) ?? 0,
    latencyOf: (id) => r.latency.ewma(id),
    costOf: (m) => comboEntryCost(services, m),
  });
  let counted = false;
  for (const entry of ordered) {
    const before = acc.targets.length;
    if (services.combos.byName(entry.model)) expandCombo(services, entry.model, acc, sessionKey, depth + 1, seen);
    else {
      try {
        providerTargets(services, entry.model, acc, sessionKey);
      } catch (err) {
        // A combo entry whose provider has no usable connection is skipped, not fatal to the combo.
        if (err instanceof RouterError) skip(acc, err);
        else throw err;
      }
    }
    // Targets are shared between requests (ProviderDirectory caches them): annotate copies.
    for (let i = before; i < acc.targets.length; i++) acc.targets[i] = { ...acc.targets[i]!, comboEntry: entry.id };
    // `least-used` counts requests routed to each entry as this level's first choice, here at planning
    // time: counted on completion, a burst planned before any reply would all pick the same entry.
    if (!counted && acc.targets.length > before) {
      counted = true;
      r.comboUsage.set(entry.id, (r.comboUsage.get(entry.id) ?? 0) + 1);
    }
  }
}

/**
 * Relative price of a combo entry for `cost-optimized`: input + output USD per million tokens from the
 * price table (defaults and overrides); undefined (sorts last) for unpriced models and nested combos.
 */
function comboEntryCost(services: PipelineDeps, model: string): number | undefined {
  const split = services.providers.split(model);
  if (!split) return undefined;
  const price = services.usage.pricing.lookup(split.def.id, split.model);
  return price ? price.input + price.output : undefined;
}

function providerTargets(services: PipelineDeps, model: string, acc: Collect, sessionKey: string | undefined): void {
  const split = services.providers.split(model);
  if (!split) throw unknownModel(services, model);
  const all = services.providers.targets(split.def, split.model, model);
  const r = services.resilience;
  // peek, not check: a half-open provider's probe slot is taken only when runChat actually calls it.
  const breaker = r.breakers.peek(split.def.id, split.model);
  if (!breaker.allowed) {
    skip(acc, circuitOpenError(services.providers.label(split.def.id), breaker.retryAfterSeconds, breaker.model));
    return;
  }
  if (all.length === 1 && all[0]!.connectionId === undefined) {
    acc.targets.push(all[0]!);
    return;
  }
  const order = r.accounts.order(split.def.id, split.model, { strategy: services.settings.get().accountStrategy, sessionKey });
  const before = acc.targets.length;
  for (const c of order) {
    const t = all.find((x) => x.connectionId === c.id);
    if (t) acc.targets.push(t);
  }
  if (acc.targets.length === before) {
    const reset = r.cooldowns.earliestReset(split.model, all.map((t) => t.connectionId!));
    skip(acc, modelCooldownError(model, Math.max(1, reset)));
  }
}
