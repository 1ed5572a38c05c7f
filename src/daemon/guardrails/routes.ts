import { z } from 'zod';
import { RouterError, publicReason } from '../http/errors.js';
import { NO_CONTENT } from '../http/replies.js';
import { noContent, route, type RouteDef } from '../http/routes.js';
import type { Services } from '../services.js';
import { DESCRIPTIONS, guardrailConfigSchema, guardrailOverrideSchema, type GuardrailConfig } from './config.js';
import { INTERNAL_AUTH } from '../proxy/execute.js';
import { guardrailBlocked } from './errors.js';
import { moderate, type ModerationSettings } from './moderation.js';
import { firstBlock, maskSample } from './policy.js';
import { GUARDRAIL_NAMES, type Finding } from './types.js';

const testBody = z
  .object({
    text: z.string().max(1_000_000),
    direction: z.enum(['request', 'response']).default('request'),
    keyId: z.string().max(100).optional(),
  })
  .strict();

function keyOr404(services: Services, keyId: string | undefined): string | undefined {
  if (keyId === undefined) return undefined;
  if (!services.keys.get(keyId)) throw new RouterError(404, 'API key not found.');
  return keyId;
}

/** The guardrails as a list: name, what it does, mode, where it applies, its other settings. */
function listGuardrails(config: GuardrailConfig) {
  return GUARDRAIL_NAMES.map((name) => {
    const { mode, ...settings } = config[name] as { mode: string; applyTo?: string } & Record<string, unknown>;
    const { applyTo = 'request', ...rest } = settings;
    return { name, description: DESCRIPTIONS[name], mode, applyTo, settings: rest };
  });
}

function findingView(f: Finding, text: string) {
  return {
    guardrail: f.guardrail,
    kind: f.kind,
    action: f.action,
    span: { start: f.start, end: f.end },
    sample: f.guardrail === 'maxInputSize' ? null : maskSample(text.slice(f.start, f.end)),
    ...(f.score !== undefined ? { score: f.score } : {}),
  };
}

/**
 * The moderation model asked about a tested text, as router's own call (a test is the operator's, not a
 * key's traffic: usage row under `guardrails:moderation` without a key). An unreachable model is reported,
 * as the proxy would fail open.
 */
async function tryModeration(services: Services, cfg: ModerationSettings, text: string) {
  try {
    const findings = await moderate(services, cfg, [text], INTERNAL_AUTH);
    return { findings, view: { model: cfg.model, checked: true, flagged: findings.length > 0 } };
  } catch (err) {
    services.log.warn('guardrail moderation test failed', { model: cfg.model, error: (err as Error).message });
    return { findings: [], view: { model: cfg.model, checked: false, error: publicReason(err) } };
  }
}

const guardrailList = z.array(
  z.object({ name: z.enum(GUARDRAIL_NAMES), description: z.string(), mode: z.string(), applyTo: z.string(), settings: z.record(z.string(), z.unknown()) }),
) satisfies z.ZodType<ReturnType<typeof listGuardrails>>;
const configReply = z.object({ guardrails: guardrailList, config: guardrailConfigSchema });
const keyReply = z.object({ keyId: z.string(), override: guardrailOverrideSchema, effective: guardrailConfigSchema });
const action = z.enum(['log', 'redact', 'block']);
const testReply = z.object({
  direction: z.enum(['request', 'response']),
  keyId: z.string().nullable(),
  blocked: z.object({ guardrail: z.enum(GUARDRAIL_NAMES), kind: z.string(), message: z.string() }).nullable(),
  findings: z.array(
    z.object({
      guardrail: z.enum(GUARDRAIL_NAMES),
      kind: z.string(),
      action,
      span: z.object({ start: z.number(), end: z.number() }),
      /** Masked; null for maxInputSize. */
      sample: z.string().nullable(),
      score: z.number().optional(),
    }),
  ),
  text: z.string(),
  moderation: z
    .union([
      z.object({ model: z.string(), checked: z.literal(true), flagged: z.boolean() }),
      z.object({ model: z.string(), checked: z.literal(false), error: z.string() }),
    ])
    .nullable(),
});

/** Guardrails: list and configure (globally and per API key), and try a text against them. */
export const guardrailRoutes: RouteDef[] = [
  route({
    method: 'GET',
    path: '/api/guardrails',
    tier: 'management',
    tag: 'guardrails',
    summary: 'Lists guardrails with their modes and settings, the global configuration and the per-key overrides',
    reply: configReply.extend({ keyOverrides: z.array(z.object({ keyId: z.string(), override: guardrailOverrideSchema })) }),
    handler: ({ services }) => ({
      guardrails: listGuardrails(services.guardrails.get()),
      config: services.guardrails.get(),
      // A deleted key's row is gone with it (ON DELETE CASCADE); its cached override is simply not shown.
      keyOverrides: services.guardrails.overridesList().filter((o) => services.keys.get(o.keyId)),
    }),
  }),
  route({
    method: 'PUT',
    path: '/api/guardrails',
    tier: 'management',
    tag: 'guardrails',
    summary: 'Replaces the global guardrail configuration (omitted guardrails and fields take their defaults)',
    body: guardrailConfigSchema,
    reply: configReply,
    handler: async ({ services, body }) => ({ guardrails: listGuardrails(await services.guardrails.set(body)), config: services.guardrails.get() }),
  }),
  route({
    method: 'PATCH',
    path: '/api/guardrails',
    tier: 'management',
    tag: 'guardrails',
    summary: 'Changes the given fields of the global guardrail configuration',
    body: guardrailOverrideSchema,
    reply: configReply,
    handler: async ({ services, body }) => ({ guardrails: listGuardrails(await services.guardrails.patch(body)), config: services.guardrails.get() }),
  }),
  route({
    method: 'GET',
    path: '/api/guardrails/keys/:keyId',
    tier: 'management',
    tag: 'guardrails',
    summary: "An API key's guardrail override and the effective configuration for its requests",
    reply: keyReply,
    handler: ({ services, params }) => {
      const keyId = keyOr404(services, params.keyId)!;
      return { keyId, override: services.guardrails.override(keyId) ?? {}, effective: services.guardrails.effective(keyId) };
    },
  }),
  route({
    method: 'PUT',
    path: '/api/guardrails/keys/:keyId',
    tier: 'management',
    tag: 'guardrails',
    summary: "Replaces an API key's guardrail override (a partial configuration laid over the global one; {} removes it)",
    body: guardrailOverrideSchema,
    reply: keyReply,
    handler: async ({ services, params, body }) => {
      const keyId = keyOr404(services, params.keyId)!;
      await services.guardrails.setOverride(keyId, body);
      return { keyId, override: services.guardrails.override(keyId) ?? {}, effective: services.guardrails.effective(keyId) };
    },
  }),
  route({
    method: 'DELETE',
    path: '/api/guardrails/keys/:keyId',
    tier: 'management',
    tag: 'guardrails',
    summary: "Removes an API key's guardrail override",
    status: 204,
    reply: NO_CONTENT,
    handler: async ({ services, params }) => {
      await services.guardrails.deleteOverride(keyOr404(services, params.keyId)!);
      return noContent();
    },
  }),
  route({
    method: 'POST',
    path: '/api/guardrails/test',
    tier: 'management',
    tag: 'guardrails',
    summary:
      'Runs a text through the configured guardrails (global, or as a given key sees them), the moderation model included when on, and returns findings and the transformed text',
    body: testBody,
    reply: testReply,
    handler: async ({ services, body }) => {
      const keyId = keyOr404(services, body.keyId);
      const policy = services.guardrails.policyFor(keyId);
      const source = body.direction === 'request' ? 'user' : 'assistant';
      const applied = policy.apply(body.text, source, body.direction);
      const size = body.direction === 'request' ? policy.sizeFinding(body.text.length) : undefined;
      const findings = size ? [size, ...applied.findings] : applied.findings;
      const moderation = body.direction === 'request' && policy.moderation ? await tryModeration(services, policy.moderation, body.text) : undefined;
      if (moderation) findings.push(...moderation.findings);
      const block = firstBlock(findings);
      return {
        direction: body.direction,
        keyId: keyId ?? null,
        blocked: block ? { guardrail: block.guardrail, kind: block.kind, message: guardrailBlocked(block, body.direction).message } : null,
        findings: findings.map((f) => findingView(f, body.text)),
        text: applied.text,
        moderation: moderation ? moderation.view : null,
      };
    },
  }),
];
