import { upstreamFormatFor } from '../proxy/chat.js';
import type { RequestStage, StageContext } from '../proxy/stages.js';
import type { IrMessage, IrRequest, IrResponse, SignatureIssuer } from '../translate/ir.js';
import type { SettingsStore } from '../settings/store.js';
import type { ReasoningCache, ReasoningPart } from './cache.js';

/** After hooks (20) and memory (50), before compression (800) and the response cache (900). */
export const REASONING_STAGE_ORDER = 60;

/** The family whose signatures an upstream format accepts; undefined for formats that take none. */
function familyOf(format: string): SignatureIssuer | undefined {
  if (format === 'anthropic') return 'anthropic';
  if (format === 'gemini') return 'gemini';
  if (format === 'openai-responses') return 'openai';
  return undefined;
}

const families = new WeakMap<StageContext, SignatureIssuer>();

function signed(p: IrMessage['parts'][number]): boolean {
  return (p.type === 'thinking' && !!p.signature) || p.type === 'redacted_thinking';
}

/** Re-inserts cached reasoning into assistant turns that made tool calls but came back without it. */
function restore(ir: IrRequest, cache: ReasoningCache, family: SignatureIssuer, ctx: StageContext): IrRequest | undefined {
  let restored = 0;
  const messages = ir.messages.map((m) => {
    if (m.role !== 'assistant' || m.parts.some(signed)) return m;
    let entry;
    for (const p of m.parts) {
      if (p.type !== 'tool_call') continue;
      entry = cache.lookup(p.id);
      break;
    }
    if (!entry || entry.issuer !== family) return m;
    restored++;
    // Unsigned thinking the client kept (reasoning_content) is replaced by the signed original.
    return { ...m, parts: [...entry.parts.map((p) => ({ ...p })), ...m.parts.filter((p) => p.type !== 'thinking')] };
  });
  if (restored === 0) return undefined;
  ctx.notes.reasoningCache = { restored };
  return { ...ir, messages };
}

/** Stores the reasoning of a reply that ended in tool calls, when it carries a signature of this family. */
function remember(res: IrResponse, cache: ReasoningCache, family: SignatureIssuer, ctx: StageContext): void {
  const toolCallIds: string[] = [];
  const parts: ReasoningPart[] = [];
  for (const p of res.parts) {
    if (p.type === 'tool_call') toolCallIds.push(p.id);
    else if (p.type === 'thinking' && p.signature && (p.issuer ?? family) === family) parts.push({ ...p, issuer: family });
    else if (p.type === 'redacted_thinking' && family === 'anthropic') parts.push(p);
  }
  if (toolCallIds.length && parts.length) cache.put(family, ctx.target.provider.id, ctx.target.model, toolCallIds, parts);
}

/**
 * The reasoning-cache stage. It wants only requests that are translated anyway (client format other than
 * the upstream's) to a family that signs its reasoning, so it never moves a request off the native path.
 */
export function reasoningStage(cache: ReasoningCache, settings: SettingsStore): RequestStage {
  return {
    name: 'reasoning-cache',
    wants(ctx) {
      if (!settings.get().reasoningCacheEnabled) return false;
      const format = upstreamFormatFor(ctx.target, ctx.call.clientFormat);
      if (format === ctx.call.clientFormat) return false;
      const family = familyOf(format);
      if (!family) return false;
      families.set(ctx, family);
      return true;
    },
    onRequest(ir, ctx) {
      const family = families.get(ctx);
      return family && cache.size > 0 ? restore(ir, cache, family, ctx) : undefined;
    },
    onComplete(_req, res, ctx) {
      const family = families.get(ctx);
      if (family) remember(res, cache, family, ctx);
    },
  };
}
