import type { RequestStage, StageContext } from '../proxy/stages.js';
import type { Target } from '../providers/target.js';
import type { ModelInfo } from '../providers/types.js';
import type { PipelineDeps } from '../proxy/deps.js';
import type { IrRequest } from '../translate/ir.js';
import { fitRequest } from './fit.js';
import type { CompressionSettings } from './settings.js';

/** Runs after guardrails (10) and memory injection (50), before the response cache (900). */
export const COMPRESSION_STAGE_ORDER = 800;

const byList = new WeakMap<readonly ModelInfo[], Map<string, number | undefined>>();

/** The context length of a target's model (synced models, else the provider's static list); undefined when unknown. */
export function contextLengthOf(services: PipelineDeps, target: Target): number | undefined {
  const list = services.providers.models(target.provider);
  let map = byList.get(list);
  if (!map) byList.set(list, (map = new Map(list.map((m) => [m.id, m.contextLength]))));
  return map.get(target.model);
}

/** Prompt tokens a request may use: the context less the safety margin and the room kept for the reply. */
export function promptBudget(contextLength: number, maxTokens: number | undefined, s: CompressionSettings): number {
  const reserve = Math.min(maxTokens ?? s.reserveOutputTokens, Math.floor(contextLength / 2));
  return Math.floor(contextLength * (1 - s.safetyMarginPercent / 100)) - reserve;
}

/** The reply limit a client asked for, read from any client format's field without decoding. */
export function rawMaxTokens(raw: Record<string, unknown>): number | undefined {
  const gen = raw.generationConfig as { maxOutputTokens?: unknown } | undefined;
  const v = raw.max_tokens ?? raw.max_completion_tokens ?? raw.max_output_tokens ?? gen?.maxOutputTokens;
  return typeof v === 'number' && v > 0 ? v : undefined;
}

/**
 * Whether a request could overflow: every token is at least one UTF-8 byte of the text and the JSON body
 * holds all the text plus framing, so body bytes bound the estimate from above. No tokenizer on this path.
 */
function mayOverflow(ctx: StageContext, s: CompressionSettings): boolean {
  const contextLength = contextLengthOf(ctx.services, ctx.target);
  if (!contextLength) return false;
  const budget = promptBudget(contextLength, rawMaxTokens(ctx.call.raw), s);
  return Buffer.byteLength(JSON.stringify(ctx.call.raw)) > budget;
}

/**
 * The compression stage: when a request would not fit the target model's context, trim tool outputs and
 * drop old turns (see fit.ts), report it in `x-router-compression` and `ctx.notes.compression`.
 */
export function compressionStage(): RequestStage {
  return {
    name: 'compression',
    wants(ctx) {
      const s = ctx.services.settings.get().compression;
      return s.enabled && mayOverflow(ctx, s);
    },
    async onRequest(ir: IrRequest, ctx) {
      const s = ctx.services.settings.get().compression;
      const contextLength = contextLengthOf(ctx.services, ctx.target)!;
      const budget = promptBudget(contextLength, ir.maxTokens, s);
      const fit = await fitRequest(ir, { budget, toolOutputMaxTokens: s.toolOutputMaxTokens, model: ctx.target.publicModel, contextLength });
      if (fit.request === ir) return undefined;
      ctx.headers['x-router-compression'] =
        `trimmed-tool-outputs=${fit.trimmedToolOutputs}; dropped-turns=${fit.droppedTurns}; tokens=${fit.tokensBefore}->${fit.tokensAfter}`;
      ctx.notes.compression = {
        trimmedToolOutputs: fit.trimmedToolOutputs,
        droppedTurns: fit.droppedTurns,
        tokensBefore: fit.tokensBefore,
        tokensAfter: fit.tokensAfter,
        contextLength,
      };
      ctx.services.log.info('request compressed', { traceId: ctx.traceId, model: ctx.target.publicModel, ...(ctx.notes.compression as object) });
      return fit.request;
    },
  };
}
