import type { RequestStage, StageContext, UpstreamEdits } from '../proxy/stages.js';
import { globMatch } from '../../shared/glob.js';
import type { IrRequest } from '../translate/ir.js';
import type { CompiledHook, HookService } from './store.js';

/**
 * Hooks run after guardrails (10) and before memory injection (50), compression (800) and the response
 * cache (900): a rewritten model is what the cache keys on.
 */
export const HOOK_STAGE_ORDER = 20;

function matches(h: CompiledHook, ctx: StageContext): boolean {
  if (h.route !== undefined && !globMatch(h.route, ctx.call.endpoint)) return false;
  if (h.model !== undefined && !globMatch(h.model, ctx.call.model) && !globMatch(h.model, ctx.target.model)) return false;
  if (h.provider !== undefined && ctx.target.provider.id !== ctx.services.providers.idFor(h.provider)) return false;
  if (h.key !== undefined) {
    const key = ctx.auth.key;
    if (!key || (key.id !== h.key && key.name !== h.key)) return false;
  }
  return true;
}

/** The hooks that matched each attempt (a stage context is one attempt at one target). */
const matched = new WeakMap<StageContext, CompiledHook[]>();

/** Applies the matched hooks' actions in order; the request's notes list them (`hooks`) and their tags (`tags`). */
function apply(ir: IrRequest, ctx: StageContext, hooks: CompiledHook[]): IrRequest {
  let out = ir;
  const edits: UpstreamEdits = { headers: {}, drop: [], set: {} };
  let edited = false;
  const tags: string[] = [];
  for (const h of hooks) {
    for (const a of h.actions) {
      switch (a.type) {
        case 'set_header':
          edits.headers[a.name] = a.value;
          edited = true;
          break;
        case 'remove_header':
          edits.headers[a.name] = null;
          edited = true;
          break;
        case 'rewrite_model':
          out = { ...out, model: a.to };
          break;
        case 'drop_field':
          delete edits.set[a.field];
          edits.drop.push(a.field);
          edited = true;
          break;
        case 'set_field':
          edits.set[a.field] = a.value;
          edited = true;
          break;
        case 'tag':
          if (!tags.includes(a.tag)) tags.push(a.tag);
          break;
        case 'reply_header':
          ctx.headers[a.name] = a.value;
          break;
      }
    }
  }
  if (edited) ctx.upstream = edits;
  ctx.notes.hooks = hooks.map((h) => h.name);
  if (tags.length) ctx.notes.tags = tags;
  if (out.model !== ir.model) ctx.notes.hookModel = out.model;
  return out;
}

/**
 * The request-hooks stage. `wants` reads one array: with no enabled hook it is empty and the request stays
 * on the native passthrough path; otherwise it matches each hook (a few string comparisons).
 */
export function hookStage(service: HookService): RequestStage {
  return {
    name: 'hooks',
    wants(ctx) {
      const all = service.compiled();
      if (all.length === 0) return false;
      const hit = all.filter((h) => matches(h, ctx));
      if (hit.length === 0) return false;
      matched.set(ctx, hit);
      return true;
    },
    onRequest(ir, ctx) {
      const hooks = matched.get(ctx);
      return hooks ? apply(ir, ctx, hooks) : undefined;
    },
  };
}
