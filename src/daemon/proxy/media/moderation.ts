import { FastResponse } from 'srvx';
import { badRequest } from '../../http/errors.js';
import type { RouteContext } from '../../http/routes.js';
import { execute, finishOutcome } from '../execute.js';
import { postJson } from '../json-call.js';
import { joinUrl } from '../../providers/target.js';
import { failReply, mediaRequest, replyHeaders, requireEndpoint, tryJson } from './common.js';

/** The model a request without one is sent to (OpenAI's own default for the endpoint). */
export const DEFAULT_MODERATION_MODEL = 'openai/omni-moderation-latest';

/** Validates `input`: a string, an array of strings, or an array of `{type: "text"|"image_url"}` parts. */
function checkInput(input: unknown): void {
  if (typeof input === 'string') return;
  if (!Array.isArray(input) || input.length === 0) throw badRequest("'input' must be a string, an array of strings, or an array of text and image_url parts.", 'input');
  for (const item of input) {
    if (typeof item === 'string') continue;
    const t = (item as { type?: unknown } | null)?.type;
    if (t === 'text' && typeof (item as { text?: unknown }).text === 'string') continue;
    if (t === 'image_url' && typeof (item as { image_url?: { url?: unknown } }).image_url?.url === 'string') continue;
    throw badRequest("Each 'input' item must be a string, {type: 'text', text} or {type: 'image_url', image_url: {url}}.", 'input');
  }
}

/** The parsed reply of a moderation call (what guardrails read). */
export interface ModerationResult {
  id?: string;
  model?: string;
  results: { flagged: boolean; categories: Record<string, boolean>; category_scores: Record<string, number> }[];
}

/**
 * POST /v1/moderations (OpenAI shape, text and image inputs) to a target with the endpoint, through the
 * executor. Moderation is free at OpenAI: the row costs 0 and no tokens are estimated.
 */
export async function runModeration(ctx: RouteContext, raw: Record<string, unknown>): Promise<Response> {
  if (raw.input === undefined) throw badRequest("The 'input' field is required.", 'input');
  checkInput(raw.input);
  if (raw.model !== undefined && (typeof raw.model !== 'string' || raw.model === '')) throw badRequest("'model' must be a string.", 'model');
  const model = (raw.model as string | undefined) ?? DEFAULT_MODERATION_MODEL;
  const m = mediaRequest(ctx, '/v1/moderations', model, raw);
  return execute(m.exec, {
    prepare(target) {
      requireEndpoint(target, 'moderations', 'moderation');
      return { url: joinUrl(target.baseUrl, 'moderations'), body: JSON.stringify({ ...raw, model: target.model }) };
    },
    async attempt(target, prepared, outcome, limits) {
      const reply = await postJson(target, prepared.url, prepared.body, limits, { sink: m.sink });
      const parsed = tryJson(reply.text) as ModerationResult | undefined;
      const results = Array.isArray(parsed?.results) ? parsed.results : [];
      outcome.status = 200;
      outcome.upstreamMs = reply.upstreamMs;
      outcome.costUsd = 0;
      outcome.notes = { flagged: results.some((r) => r?.flagged === true), inputs: results.length };
      finishOutcome(m.services, outcome, undefined);
      return new FastResponse(reply.text, { status: 200, headers: replyHeaders(m, 'application/json; charset=utf-8', reply.upstreamMs) });
    },
    fail: (last) => failReply(m, last, 'openai-chat'),
  });
}
