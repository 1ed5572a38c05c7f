import type { RequestStage, StageContext } from '../proxy/stages.js';
import type { IrRequest } from '../translate/ir.js';
import { guardrailBlocked } from './errors.js';
import { moderationFindings } from './moderation.js';
import { firstBlock, summarize } from './policy.js';
import type { GuardrailService } from './store.js';
import { GuardrailStream } from './stream.js';
import { mapRequestTexts, mapResponseTexts, requestChars } from './texts.js';
import type { Direction, Finding } from './types.js';

/** Guardrails run first: before memory injection (50), compression (800) and the response cache (900). */
export const GUARDRAIL_STAGE_ORDER = 10;

/** Records findings: `ctx.notes.guardrails.<direction>` (counts per guardrail and kind) and the daemon log. */
function record(ctx: StageContext, direction: Direction, findings: Finding[]): void {
  if (findings.length === 0) return;
  const summary = summarize(findings);
  const notes = (ctx.notes.guardrails ??= {}) as Record<string, unknown>;
  notes[direction] = summary;
  ctx.services.log.info('guardrail findings', { traceId: ctx.traceId, key: ctx.auth.key?.name, keyId: ctx.auth.key?.id, direction, findings: summary });
}

/** Runs the policy over every text of a request: redacts, or throws the 400 when a block-mode guardrail fires. */
export function guardRequest(ir: IrRequest, ctx: StageContext, service: GuardrailService): IrRequest | undefined | Promise<IrRequest | undefined> {
  const policy = service.policyFor(ctx.auth.key?.id);
  if (!policy.has('request')) return undefined;
  const findings: Finding[] = [];
  const size = policy.maxInput ? policy.sizeFinding(requestChars(ir)) : undefined;
  if (size) findings.push(size);
  const out = mapRequestTexts(ir, (text, source, copy) => {
    const r = policy.apply(text, source, 'request');
    if (!copy) findings.push(...r.findings);
    return r.text;
  });
  const settle = (): IrRequest => {
    record(ctx, 'request', findings);
    const block = firstBlock(findings);
    if (block) {
      ctx.services.log.warn('guardrail blocked a request', { traceId: ctx.traceId, key: ctx.auth.key?.name, keyId: ctx.auth.key?.id, guardrail: block.guardrail, kind: block.kind });
      throw guardrailBlocked(block, 'request');
    }
    return out;
  };
  // The moderation model is the one detector that calls out (guardrails/moderation.ts): it judges the
  // request as the client sent it; the text detectors' redactions still apply to what goes upstream.
  if (!policy.moderation) return settle();
  return moderationFindings(ir, ctx, policy).then((more) => {
    findings.push(...more);
    return settle();
  });
}

/**
 * The guardrails request stage. `wants` is one map lookup and a flag: with no guardrail on for the key,
 * the request stays on the native passthrough path.
 */
export function guardrailStage(service: GuardrailService): RequestStage {
  return {
    name: 'guardrails',
    wants: (ctx) => service.policyFor(ctx.auth.key?.id).enabled,
    onRequest: (ir, ctx) => guardRequest(ir, ctx, service),
    onResponse(res, _req, ctx) {
      const policy = service.policyFor(ctx.auth.key?.id);
      if (!policy.has('response')) return undefined;
      const findings: Finding[] = [];
      const out = mapResponseTexts(res, (text, source) => {
        const r = policy.apply(text, source, 'response');
        findings.push(...r.findings);
        return r.text;
      });
      record(ctx, 'response', findings);
      const block = firstBlock(findings);
      if (block) throw guardrailBlocked(block, 'response');
      return out;
    },
    streamTransform(_req, ctx) {
      const policy = service.policyFor(ctx.auth.key?.id);
      if (!policy.has('response')) return undefined;
      return new GuardrailStream(policy, (findings) => record(ctx, 'response', findings));
    },
  };
}
