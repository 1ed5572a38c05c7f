import { z } from 'zod';
import { PII_KINDS } from './detectors/pii.js';
import { SECRET_KINDS } from './detectors/secrets.js';
import type { GuardrailName } from './types.js';

const mode = z.enum(['off', 'log', 'redact', 'block']);
const applyTo = z.enum(['request', 'response', 'both']);

// Field schemas without defaults: the per-key override is the same shape with every field optional.
const fields = {
  pii: { mode, applyTo, kinds: z.array(z.enum(PII_KINDS)).max(PII_KINDS.length) },
  secrets: { mode, applyTo, kinds: z.array(z.enum(SECRET_KINDS)).max(SECRET_KINDS.length) },
  promptInjection: { mode, applyTo, threshold: z.number().min(0.05).max(1) },
  blockedTerms: {
    mode,
    applyTo,
    terms: z.array(z.string().trim().min(1).max(200)).max(1000),
    caseSensitive: z.boolean(),
    wholeWord: z.boolean(),
  },
  // A size cannot be redacted: off, log or block only.
  maxInputSize: { mode: z.enum(['off', 'log', 'block']), maxChars: z.number().int().min(1).max(100_000_000) },
  // A moderation model (POST /v1/moderations through the executor) as a request detector: off, log or block.
  moderation: {
    mode: z.enum(['off', 'log', 'block']),
    model: z.string().trim().min(1).max(200),
    categories: z.array(z.string().trim().min(1).max(100)).max(50),
  },
};

/** Defaults: every guardrail off (opt in per guardrail, globally or per key). */
export const DEFAULT_CONFIG = {
  pii: { mode: 'off', applyTo: 'both', kinds: [...PII_KINDS] },
  secrets: { mode: 'off', applyTo: 'both', kinds: [...SECRET_KINDS] },
  promptInjection: { mode: 'off', applyTo: 'request', threshold: 0.5 },
  blockedTerms: { mode: 'off', applyTo: 'both', terms: [] as string[], caseSensitive: false, wholeWord: true },
  maxInputSize: { mode: 'off', maxChars: 400_000 },
  moderation: { mode: 'off', model: 'openai/omni-moderation-latest', categories: [] as string[] },
} as const;

const D = DEFAULT_CONFIG;
const full = {
  pii: z.object({ mode: mode.default(D.pii.mode), applyTo: applyTo.default(D.pii.applyTo), kinds: fields.pii.kinds.default([...D.pii.kinds]) }),
  secrets: z.object({
    mode: mode.default(D.secrets.mode),
    applyTo: applyTo.default(D.secrets.applyTo),
    kinds: fields.secrets.kinds.default([...D.secrets.kinds]),
  }),
  promptInjection: z.object({
    mode: mode.default(D.promptInjection.mode),
    applyTo: applyTo.default(D.promptInjection.applyTo),
    threshold: fields.promptInjection.threshold.default(D.promptInjection.threshold),
  }),
  blockedTerms: z.object({
    mode: mode.default(D.blockedTerms.mode),
    applyTo: applyTo.default(D.blockedTerms.applyTo),
    terms: fields.blockedTerms.terms.default([]),
    caseSensitive: z.boolean().default(D.blockedTerms.caseSensitive),
    wholeWord: z.boolean().default(D.blockedTerms.wholeWord),
  }),
  maxInputSize: z.object({ mode: fields.maxInputSize.mode.default(D.maxInputSize.mode), maxChars: fields.maxInputSize.maxChars.default(D.maxInputSize.maxChars) }),
  moderation: z.object({
    mode: fields.moderation.mode.default(D.moderation.mode),
    model: fields.moderation.model.default(D.moderation.model),
    categories: fields.moderation.categories.default([]),
  }),
};

/** The whole configuration (PUT /api/guardrails): omitted guardrails and fields take their defaults. */
export const guardrailConfigSchema = z
  .object({
    pii: full.pii.strict().prefault({}),
    secrets: full.secrets.strict().prefault({}),
    promptInjection: full.promptInjection.strict().prefault({}),
    blockedTerms: full.blockedTerms.strict().prefault({}),
    maxInputSize: full.maxInputSize.strict().prefault({}),
    moderation: full.moderation.strict().prefault({}),
  })
  .strict();
export type GuardrailConfig = z.infer<typeof guardrailConfigSchema>;

/** A partial configuration: PATCH /api/guardrails and the per-key overrides. Only given fields apply. */
export const guardrailOverrideSchema = z
  .object({
    pii: z.object(fields.pii).partial().strict().optional(),
    secrets: z.object(fields.secrets).partial().strict().optional(),
    promptInjection: z.object(fields.promptInjection).partial().strict().optional(),
    blockedTerms: z.object(fields.blockedTerms).partial().strict().optional(),
    maxInputSize: z.object(fields.maxInputSize).partial().strict().optional(),
    moderation: z.object(fields.moderation).partial().strict().optional(),
  })
  .strict();
export type GuardrailOverride = z.infer<typeof guardrailOverrideSchema>;

/** A configuration with an override laid over it, field by field (lists replace, they do not merge). */
export function mergeConfig(base: GuardrailConfig, over: GuardrailOverride | undefined): GuardrailConfig {
  if (!over) return base;
  const out = { ...base } as Record<string, unknown>;
  for (const [k, v] of Object.entries(over)) {
    if (v) out[k] = { ...(base as Record<string, object>)[k], ...Object.fromEntries(Object.entries(v).filter(([, x]) => x !== undefined)) };
  }
  return out as GuardrailConfig;
}

/** What each guardrail does, for GET /api/guardrails. */
export const DESCRIPTIONS: Record<GuardrailName, string> = {
  maxInputSize: 'Refuses (or logs) requests whose text is longer than maxChars characters.',
  blockedTerms: 'Configured words and phrases, matched as whole words, case-insensitive unless caseSensitive.',
  secrets: 'API keys and credentials of well-known formats (OpenAI, Anthropic, AWS, GitHub, Google, Slack, Stripe, JWT, PEM private keys).',
  pii: 'Emails, phone numbers, payment cards (Luhn), IBANs (mod 97), US SSNs and UK National Insurance numbers.',
  moderation:
    "A moderation model (POST /v1/moderations through router's executor; default openai/omni-moderation-latest) over the request's user and tool text; a flagged result (in `categories`, or any when empty) is a finding. Fails open: an unreachable model is logged, the request goes on.",
  promptInjection: 'Weighted phrase heuristics (instruction and role override, system-prompt exfiltration, jailbreak modes), scored per text against a threshold; user and tool text only.',
};
