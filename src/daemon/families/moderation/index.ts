import type { Family } from '../family.js';
import { badField, JSON_TYPE, jsonAsk, requireEndpoint, tryJson } from '../util.js';
import { moderationReply } from './reply.js';

/** POST /v1/moderations (OpenAI shape, text and image inputs). Moderation is free at OpenAI: the row costs 0. */

/** The model a request without one is sent to (OpenAI's own default for the endpoint). */
export const DEFAULT_MODERATION_MODEL = 'openai/omni-moderation-latest';

/** The parsed reply of a moderation call (what guardrails read). */
export interface ModerationResult {
  id?: string;
  model?: string;
  results: { flagged: boolean; categories: Record<string, boolean>; category_scores: Record<string, number> }[];
}

/** Validates `input`: a string, an array of strings, or an array of `{type: "text"|"image_url"}` parts. */
function checkInput(input: unknown): void {
  if (typeof input === 'string') return;
  if (!Array.isArray(input) || input.length === 0) throw badField("'input' must be a string, an array of strings, or an array of text and image_url parts.", 'input');
  for (const item of input) {
    if (typeof item === 'string') continue;
    const t = (item as { type?: unknown } | null)?.type;
    if (t === 'text' && typeof (item as { text?: unknown }).text === 'string') continue;
    if (t === 'image_url' && typeof (item as { image_url?: { url?: unknown } }).image_url?.url === 'string') continue;
    throw badField("Each 'input' item must be a string, {type: 'text', text} or {type: 'image_url', image_url: {url}}.", 'input');
  }
}

export const moderation: Family<{ raw: Record<string, unknown>; model: string }> = {
  name: 'moderation',
  route: { path: '/v1/moderations', body: 'json', summary: 'Moderation (OpenAI shape, text and image inputs); model defaults to openai/omni-moderation-latest', reply: moderationReply },
  read({ json: raw }) {
    if (raw!.input === undefined) throw badField("The 'input' field is required.", 'input');
    checkInput(raw!.input);
    if (raw!.model !== undefined && (typeof raw!.model !== 'string' || raw!.model === '')) throw badField("'model' must be a string.", 'model');
    return { raw: raw!, model: (raw!.model as string | undefined) ?? DEFAULT_MODERATION_MODEL };
  },
  call: ({ raw, model }) => ({ model, raw, stream: false }),
  encode({ raw }, target) {
    requireEndpoint(target, 'moderations', 'moderation');
    return jsonAsk('moderations', raw, target.model);
  },
  decode([reply]) {
    const parsed = tryJson(reply!.text) as ModerationResult | undefined;
    const results = Array.isArray(parsed?.results) ? parsed.results : [];
    return { body: reply!.text, contentType: JSON_TYPE, cost: () => 0, notes: { flagged: results.some((r) => r?.flagged === true), inputs: results.length } };
  },
};
