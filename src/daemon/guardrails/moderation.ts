import type { AuthInfo } from '../auth/pipeline.js';
import { RouterError } from '../http/errors.js';
import { internalCall } from '../proxy/internal-call.js';
import type { PipelineDeps } from '../proxy/deps.js';
import type { ChatCall } from '../proxy/chat.js';
import type { StageContext } from '../proxy/stages.js';
import { joinUrl } from '../providers/target.js';
import type { IrRequest } from '../translate/ir.js';
import type { GuardrailPolicy } from './policy.js';
import { mapRequestTexts } from './texts.js';
import type { Finding } from './types.js';

/** The usage-row endpoint of the moderation calls guardrails make. */
export const MODERATION_ENDPOINT = 'guardrails:moderation';

/** One call's verdict, kept per client call: a failover target reruns the stages, not the moderation call. */
const verdicts = new WeakMap<ChatCall, Promise<Finding[]>>();

/** The user and tool texts of a request (what a moderation model judges; system and assistant text are the operator's and the model's). */
function moderatedTexts(ir: IrRequest): string[] {
  const out: string[] = [];
  mapRequestTexts(ir, (text, source, copy) => {
    if (!copy && (source === 'user' || source === 'tool') && text.trim() !== '') out.push(text);
    return text;
  });
  return out;
}

interface ModerationReply {
  results?: { flagged?: boolean; categories?: Record<string, boolean> }[];
}

/** The refusals of the caller's own quotas (quotas/index.ts): they stand, unlike an unreachable model. */
const QUOTA_CODES = new Set(['daily_request_limit', 'token_limit', 'relay_rate_limit_key', 'relay_rate_limit_ip']);

/** Whether a moderation call's failure is the caller's quota refusing it (passed on, never failed open). */
export function isQuotaRefusal(err: unknown): err is RouterError {
  return err instanceof RouterError && err.status === 429 && typeof err.code === 'string' && QUOTA_CODES.has(err.code);
}

/** The moderation detector's settings, as the policy holds them. */
export type ModerationSettings = NonNullable<GuardrailPolicy['moderation']>;

/**
 * Asks the moderation model about `texts` through the executor (`POST {base}/moderations` of the
 * configured model's provider; breakers, failover in a combo, a usage row under `guardrails:moderation`),
 * on behalf of `auth`: the caller's key is named on the row and its quotas count the call, but its
 * `model:` scopes do not restrict the guardrail's model (router chose it, not the caller). A flagged result
 * whose flagged categories meet the configured list (any, when empty) is one finding per text, named by
 * its first such category. Throws when the call fails (the caller decides whether to fail open).
 */
export async function moderate(services: PipelineDeps, cfg: ModerationSettings, texts: string[], auth: AuthInfo): Promise<Finding[]> {
  if (texts.length === 0) return [];
  const { value } = await internalCall(services, {
    endpoint: MODERATION_ENDPOINT,
    model: cfg.model,
    timeoutMs: 30_000,
    auth,
    routerChosenModel: true,
    request: (target) => ({ url: joinUrl(target.baseUrl, 'moderations'), body: { model: target.model, input: texts } }),
    read: (json) => {
      const results = (json as ModerationReply).results;
      if (!Array.isArray(results)) throw new Error('no results');
      return { value: results, usage: { inputTokens: 0, outputTokens: 0 } };
    },
  });
  const findings: Finding[] = [];
  value.forEach((r, i) => {
    if (!r?.flagged) return;
    const flagged = Object.entries(r.categories ?? {})
      .filter(([, on]) => on === true)
      .map(([c]) => c);
    const hit = cfg.categories.length ? flagged.find((c) => cfg.categories.includes(c)) : (flagged[0] ?? 'flagged');
    if (hit) findings.push({ guardrail: 'moderation', kind: hit, start: 0, end: texts[i]?.length ?? 0, action: cfg.mode });
  });
  return findings;
}

/**
 * The moderation detector over a request's user and tool text, counted against the caller's key
 * ({@link moderate}). Fails open: when the model cannot be reached the request goes on and the failure is
 * logged (a moderation outage must not stop all traffic); a refusal by the caller's own quota stands.
 */
export function moderationFindings(ir: IrRequest, ctx: StageContext, policy: GuardrailPolicy): Promise<Finding[]> {
  const cfg = policy.moderation;
  if (!cfg) return Promise.resolve([]);
  const known = verdicts.get(ctx.call);
  if (known) return known;
  const texts = moderatedTexts(ir);
  const run = async (): Promise<Finding[]> => {
    try {
      return await moderate(ctx.services, cfg, texts, ctx.auth);
    } catch (err) {
      if (isQuotaRefusal(err)) throw err;
      ctx.services.log.warn('guardrail moderation model unavailable; request not moderated', { traceId: ctx.traceId, model: cfg.model, error: (err as Error).message });
      ctx.notes.moderationUnavailable = true;
      return [];
    }
  };
  const verdict = run();
  verdicts.set(ctx.call, verdict);
  return verdict;
}
