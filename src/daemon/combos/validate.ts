import { z } from 'zod';
import { badRequest, RouterError } from '../http/errors.js';
import type { ProviderDirectory } from '../providers/directory.js';
import { modelHint, type HintProviders } from '../providers/model-hint.js';
import { modelIdProblem } from '../providers/model-id.js';
import type { ProviderDef } from '../providers/types.js';
import { COMBO_STRATEGIES, DEFAULT_COMBO_STRATEGY } from '../routing/strategies.js';
import { COMBO_AFFINITIES, MID_STREAM_RECOVERIES } from '../../shared/records.js';
import { isoTime } from '../http/replies.js';
import type { ComboInput, ComboLookup, ComboModel, ComboRecord, ComboStore } from './store.js';

/** Characters a combo name may use; `/` is allowed, so names read like model ids (`team/fast`). */
export const COMBO_NAME_RE = /^[A-Za-z0-9._:/-]+$/;
export const COMBO_NAME_MAX = 100;
export const MAX_COMBO_MODELS = 50;
/** Most combos on any path from a combo down to a leaf target, the combo itself included. */
export const MAX_COMBO_DEPTH = 4;
export const MIN_TARGET_TIMEOUT_MS = 100;
/** Shortest hedge delay: below it every request would start two targets (ms). */
export const MIN_HEDGE_AFTER_MS = 50;
export const MAX_TARGET_TIMEOUT_MS = 600_000;
export const MAX_COMBO_WEIGHT = 1_000_000;
const MODEL_MAX = 512;

const modelString = z.string().min(1, 'must not be empty').max(MODEL_MAX, `must be at most ${MODEL_MAX} characters`);

/** A `models` entry: `"provider/model"`, `"combo-name"` or `{model, weight?}`. */
export const comboModelEntry = z.union([
  modelString,
  z
    .object({
      model: modelString,
      weight: z
        .number({ error: 'must be a number' })
        .positive('must be a positive number')
        .max(MAX_COMBO_WEIGHT, `must be at most ${MAX_COMBO_WEIGHT}`)
        .optional(),
    })
    .strict(),
]);

/** Body of POST /api/combos and PUT /api/combos/:id (shape only; `checkCombo` does the rest). */
export const comboBody = z
  .object({
    name: z
      .string({ error: 'is required and must be a string' })
      .min(1, 'must not be empty')
      .max(COMBO_NAME_MAX, `must be at most ${COMBO_NAME_MAX} characters`)
      .regex(COMBO_NAME_RE, 'may contain only letters, digits and . _ : - /'),
    strategy: z.enum(COMBO_STRATEGIES, { error: `must be one of ${COMBO_STRATEGIES.join(', ')}` }).optional(),
    models: z
      .array(comboModelEntry, { error: 'is required and must be an array' })
      .min(1, 'must list at least one model')
      .max(MAX_COMBO_MODELS, `must list at most ${MAX_COMBO_MODELS} models`),
    targetTimeoutMs: z
      .number()
      .int('must be an integer number of milliseconds')
      .min(MIN_TARGET_TIMEOUT_MS, `must be at least ${MIN_TARGET_TIMEOUT_MS}`)
      .max(MAX_TARGET_TIMEOUT_MS, `must be at most ${MAX_TARGET_TIMEOUT_MS}`)
      .nullable()
      .optional(),
    affinity: z.enum(COMBO_AFFINITIES, { error: `must be one of ${COMBO_AFFINITIES.join(', ')}` }).optional(),
    hedgeAfterMs: z
      .number()
      .int('must be an integer number of milliseconds')
      .min(MIN_HEDGE_AFTER_MS, `must be at least ${MIN_HEDGE_AFTER_MS}`)
      .max(MAX_TARGET_TIMEOUT_MS, `must be at most ${MAX_TARGET_TIMEOUT_MS}`)
      .nullable()
      .optional(),
    midStreamRecovery: z.enum(MID_STREAM_RECOVERIES, { error: `must be one of ${MID_STREAM_RECOVERIES.join(', ')}, or null` }).nullable().optional(),
    contextFit: z.boolean({ error: 'must be true or false' }).optional(),
  })
  .strict();

export type ComboBody = z.infer<typeof comboBody>;

/** What `checkCombo` needs from the services. */
export interface ComboContext {
  providers: Pick<ProviderDirectory, 'provider' | 'split'> & HintProviders;
  combos: ComboStore;
}

/**
 * Checks a shape-valid body against the current state and returns what to store. `selfId` is the combo
 * being replaced (PUT). Throws RouterError:
 * - 400 a name whose first `/`-segment (or whole name) is a provider id, alias or node prefix (it would
 *   shadow `<provider>/<model>` ids); a model listed twice; a model that is neither a known
 *   `<provider>/<model>` nor a combo; a reference cycle (named); nesting deeper than MAX_COMBO_DEPTH.
 * - 409 a name another combo has; renaming a combo that other combos reference.
 */
export function checkCombo(body: ComboBody, ctx: ComboContext, selfId?: string): ComboInput {
  const { name } = body;
  const head = name.split('/')[0]!;
  const shadowed = ctx.providers.provider(head);
  if (shadowed) {
    throw new RouterError(
      400,
      `Combo name '${name}' would shadow provider '${head}' (models are addressed ${head}/<model>); choose a name whose first segment is not a provider id, alias or node prefix.`,
      { code: 'combo_name_shadows_provider', extra: { param: 'name' } },
    );
  }
  const previous = selfId ? ctx.combos.get(selfId) : undefined;
  const holder = ctx.combos.byName(name);
  if (holder && holder.id !== selfId) {
    throw new RouterError(409, `A combo named '${name}' already exists.`, { code: 'combo_name_taken', extra: { param: 'name' } });
  }
  if (previous && previous.name !== name) {
    const users = ctx.combos.referrers(previous.name);
    if (users.length > 0) throw inUse(previous.name, users, 'renamed');
  }

  const models: ComboModel[] = body.models.map((m) =>
    typeof m === 'string' ? { model: m } : m.weight === undefined ? { model: m.model } : { model: m.model, weight: m.weight },
  );

  // The graph as it would be after this write: this combo under its new name, the others unchanged.
  const view = proposedView(ctx.combos, { id: selfId, name, models });
  const seen = new Set<string>();
  models.forEach((m, i) => {
    if (seen.has(m.model)) throw badRequest(`Model '${m.model}' is listed twice in combo '${name}'.`, `models.${i}`);
    seen.add(m.model);
    if (view.has(m.model)) return;
    const split = ctx.providers.split(m.model);
    if (split) {
      const problem = modelIdProblem(split.def, split.model);
      if (problem) throw new RouterError(400, `Invalid model '${m.model.slice(0, 200)}': ${problem}.`, { code: 'invalid_model', extra: { param: `models.${i}` } });
      return;
    }
    const slash = m.model.indexOf('/');
    const message =
      slash > 0
        ? `Unknown model '${m.model}': '${m.model.slice(0, slash)}' is not a known provider and no combo has this name.`
        : `Unknown model '${m.model}': use <provider>/<model> or the name of an existing combo.`;
    const hint = modelHint(ctx.providers, [...view.keys()].filter((n) => n !== name), m.model);
    throw new RouterError(400, `${message}${hint}`, { code: 'unknown_model', extra: { param: `models.${i}` } });
  });

  const cycle = findCycle(name, view);
  if (cycle) {
    throw new RouterError(400, `Combo reference cycle: ${cycle.join(' -> ')}.`, {
      code: 'combo_cycle',
      extra: { param: 'models', cycle },
    });
  }
  const deepest = deepestChain(view);
  if (deepest.length > MAX_COMBO_DEPTH) {
    throw new RouterError(
      400,
      `Combos would nest ${deepest.length} levels deep (${deepest.join(' -> ')}); the limit is ${MAX_COMBO_DEPTH}.`,
      { code: 'combo_too_deep', extra: { param: 'models', chain: deepest } },
    );
  }

  return {
    name,
    strategy: body.strategy ?? DEFAULT_COMBO_STRATEGY,
    models,
    targetTimeoutMs: body.targetTimeoutMs ?? null,
    affinity: body.affinity ?? 'off',
    hedgeAfterMs: body.hedgeAfterMs ?? null,
    midStreamRecovery: body.midStreamRecovery ?? null,
    contextFit: body.contextFit ?? false,
  };
}

/** 409 for deleting (or renaming) a combo that other combos list among their models. */
export function inUse(name: string, users: readonly ComboRecord[], verb: 'deleted' | 'renamed'): RouterError {
  const names = users.map((u) => u.name);
  return new RouterError(
    409,
    `Combo '${name}' cannot be ${verb}: it is used by combo${names.length > 1 ? 's' : ''} ${names.map((n) => `'${n}'`).join(', ')}; remove it from ${names.length > 1 ? 'those combos' : 'that combo'} first.`,
    { code: 'combo_in_use', extra: { referrers: names } },
  );
}

type View = Map<string, readonly ComboModel[]>;

function proposedView(store: ComboLookup, next: { id?: string; name: string; models: readonly ComboModel[] }): View {
  const view: View = new Map();
  for (const c of store.list()) if (c.id !== next.id) view.set(c.name, c.models);
  view.set(next.name, next.models);
  return view;
}

/** The first cycle through `start`, as names from start back to start; undefined when none. */
function findCycle(start: string, view: View): string[] | undefined {
  const path: string[] = [];
  const done = new Set<string>();
  const visit = (name: string): string[] | undefined => {
    const at = path.indexOf(name);
    if (at >= 0) return [...path.slice(at), name];
    if (done.has(name)) return undefined;
    path.push(name);
    for (const m of view.get(name) ?? []) {
      if (!view.has(m.model)) continue;
      const found = visit(m.model);
      if (found) return found;
    }
    path.pop();
    done.add(name);
    return undefined;
  };
  return visit(start);
}

/** The longest chain of combos in an acyclic view (root first). */
function deepestChain(view: View): string[] {
  const memo = new Map<string, string[]>();
  const chain = (name: string): string[] => {
    const hit = memo.get(name);
    if (hit) return hit;
    let best: string[] = [];
    for (const m of view.get(name) ?? []) {
      if (!view.has(m.model)) continue;
      const sub = chain(m.model);
      if (sub.length > best.length) best = sub;
    }
    const out = [name, ...best];
    memo.set(name, out);
    return out;
  };
  let deepest: string[] = [];
  for (const name of view.keys()) {
    const c = chain(name);
    if (c.length > deepest.length) deepest = c;
  }
  return deepest;
}

/** One leaf target of a combo tree. */
export interface ComboLeaf {
  /** The `<provider>/<model>` (or any string that is not a combo name: it may be unknown by now). */
  model: string;
  /** The weight declared next to the leaf in its own combo. */
  weight?: number;
  /** Combo names from the expanded combo down to the one that lists this leaf. */
  via: string[];
}

/**
 * Flattens a combo into its leaf targets, depth first in declared order (duplicates reached through
 * different branches are kept: the caller decides). Tolerant by design, for inspection and the catalog:
 * a reference back into the current path is skipped, and combos nested deeper than `maxDepth` (the
 * expanded combo is level 1) are not descended into. Undefined when `name` is not a combo. A record may be
 * passed instead of a name (its own models are read; nested combos are looked up in `store`).
 */
export function expandCombo(
  name: string | ComboRecord,
  store: Pick<ComboLookup, 'byName'>,
  maxDepth: number = MAX_COMBO_DEPTH,
): ComboLeaf[] | undefined {
  const root = typeof name === 'string' ? store.byName(name) : name;
  if (!root) return undefined;
  const out: ComboLeaf[] = [];
  const walk = (combo: ComboRecord, via: string[]) => {
    for (const m of combo.models) {
      const child = store.byName(m.model);
      if (!child) {
        out.push(m.weight === undefined ? { model: m.model, via } : { model: m.model, weight: m.weight, via });
        continue;
      }
      if (via.includes(child.name) || via.length >= maxDepth) continue;
      walk(child, [...via, child.name]);
    }
  };
  walk(root, [root.name]);
  return out;
}

/**
 * The catalog context length of a combo: the minimum `context_length` over its leaf targets whose
 * provider is known and whose model has a known context length (synced list, else the static one).
 * Unknown targets are ignored (spec: "computed from its known targets only"). Undefined when none is known.
 */
export function comboContextLength(
  combo: ComboRecord | string,
  services: { providers: Pick<ProviderDirectory, 'split' | 'models'>; combos: Pick<ComboLookup, 'byName'> },
): number | undefined {
  const leaves = expandCombo(combo, services.combos);
  if (!leaves) return undefined;
  let min: number | undefined;
  for (const leaf of leaves) {
    const split = services.providers.split(leaf.model);
    if (!split) continue;
    const info = services.providers.models(split.def).find((m) => m.id === split.model);
    const ctx = info?.contextLength;
    if (typeof ctx === 'number' && ctx > 0 && (min === undefined || ctx < min)) min = ctx;
  }
  return min;
}

/** A combo as the replies show it (its targets normalized to objects). */
export const comboReply = z.object({
  id: z.string(),
  name: z.string(),
  strategy: z.enum(COMBO_STRATEGIES),
  models: z.array(z.object({ model: z.string(), weight: z.number().optional() })),
  targetTimeoutMs: z.number().nullable(),
  affinity: z.enum(COMBO_AFFINITIES),
  hedgeAfterMs: z.number().nullable(),
  midStreamRecovery: z.enum(MID_STREAM_RECOVERIES).nullable(),
  contextFit: z.boolean(),
  createdAt: isoTime,
  updatedAt: isoTime,
}) satisfies z.ZodType<ComboRecord>;
