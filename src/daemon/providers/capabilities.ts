import type { ModelInfo, ProviderDef } from './types.js';

/** What a model accepts, as translation needs to know it. */
export interface ModelCapabilities {
  /** Takes Chat Completions `reasoning_effort` (o-series, gpt-5 family, reasoning-capable compatible models). */
  reasoningEffort: boolean;
  /** The most output tokens one reply may have; undefined when unknown. */
  maxOutputTokens?: number;
  /** Refuses Chat Completions `max_tokens` and takes only `max_completion_tokens` (OpenAI's reasoning models). */
  completionTokensOnly: boolean;
}

/**
 * Model families by name, for models no catalog lists (provider nodes, models added upstream later). A
 * catalog entry always wins; these only fill the gaps, and say "no" when unsure (an unknown parameter is a
 * 400 at most OpenAI-compatible servers, a missing one is not).
 */
const REASONING_NAME = /(^|\/)(o[1-9](-|$)|gpt-5|gpt-oss|grok-3-mini)/i;
/** OpenAI's reasoning families, which refuse `max_tokens` on any server that checks like OpenAI's (Azure...). */
const COMPLETION_TOKENS_NAME = /(^|\/)(o[1-9](-|$)|gpt-5)/i;
const OUTPUT_BY_NAME: Array<[RegExp, number]> = [
  [/claude-(opus|sonnet|haiku)-4-[5-9]/i, 64_000],
  [/claude-sonnet-4|claude-3-7-sonnet/i, 64_000],
  [/claude-opus-4/i, 32_000],
  [/claude-3-5/i, 8_192],
];

const cache = new WeakMap<ProviderDef, Map<string, ModelCapabilities>>();

function fromName(model: string): ModelCapabilities {
  const out = OUTPUT_BY_NAME.find(([re]) => re.test(model))?.[1];
  return { reasoningEffort: REASONING_NAME.test(model), completionTokensOnly: COMPLETION_TOKENS_NAME.test(model), ...(out ? { maxOutputTokens: out } : {}) };
}

function fromEntry(entry: ModelInfo): ModelCapabilities {
  return { reasoningEffort: entry.reasoning === true, completionTokensOnly: COMPLETION_TOKENS_NAME.test(entry.id), ...(entry.maxOutputTokens ? { maxOutputTokens: entry.maxOutputTokens } : {}) };
}

/** A model's capabilities from its provider's catalog entry, else from its family name. Cached per provider. */
export function modelCapabilities(def: ProviderDef, model: string): ModelCapabilities {
  let byModel = cache.get(def);
  if (!byModel) cache.set(def, (byModel = new Map()));
  let caps = byModel.get(model);
  if (!caps) {
    const entry = def.models.find((m) => m.id === model);
    caps = entry ? fromEntry(entry) : fromName(model);
    byModel.set(model, caps);
  }
  return caps;
}
