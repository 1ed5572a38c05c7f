import { z } from 'zod';
import type { EvalCaseResult, EvalModelScore, EvalRecord, EvalRun } from '../../shared/observability.js';
import { isoTime } from '../http/replies.js';

/** Reply schemas of the eval routes (RouteDef.reply). */

const checkType = z.enum(['contains', 'not-contains', 'equals', 'regex', 'json-valid']);

const evalCheck = z.discriminatedUnion('type', [
  z.object({ type: z.enum(['contains', 'not-contains', 'equals']), value: z.string(), ignoreCase: z.boolean().optional() }),
  z.object({ type: z.literal('regex'), value: z.string(), flags: z.string().optional() }),
  z.object({ type: z.literal('json-valid') }),
]);

export const evalRecord = z.object({
  id: z.string(),
  name: z.string(),
  description: z.string(),
  models: z.array(z.string()),
  cases: z.array(z.object({ name: z.string().optional(), system: z.string().optional(), prompt: z.string(), checks: z.array(evalCheck) })),
  maxTokens: z.number(),
  concurrency: z.number(),
  createdAt: isoTime,
  updatedAt: isoTime,
}) satisfies z.ZodType<EvalRecord>;

const modelScore = z.object({
  model: z.string(),
  cases: z.number(),
  passed: z.number(),
  score: z.number(),
  errors: z.number(),
  avgLatencyMs: z.number().nullable(),
  p50LatencyMs: z.number().nullable(),
  tokensIn: z.number(),
  tokensOut: z.number(),
  costUsd: z.number(),
  unpricedRequests: z.number(),
}) satisfies z.ZodType<EvalModelScore>;

const caseResult = z.object({
  model: z.string(),
  caseIndex: z.number(),
  passed: z.boolean(),
  checks: z.array(z.object({ type: checkType, passed: z.boolean() })),
  output: z.string().nullable(),
  error: z.string().nullable(),
  latencyMs: z.number(),
  tokensIn: z.number(),
  tokensOut: z.number(),
  costUsd: z.number().nullable(),
  provider: z.string().nullable(),
  traceId: z.string().nullable(),
}) satisfies z.ZodType<EvalCaseResult>;

/** A run; `results` only where the route says it answers the per-case results. */
export const evalRun = z.object({
  id: z.string(),
  evalId: z.string(),
  status: z.enum(['running', 'completed', 'interrupted']),
  models: z.array(z.string()),
  startedAt: isoTime,
  finishedAt: isoTime.nullable(),
  scores: z.array(modelScore),
  results: z.array(caseResult).optional(),
}) satisfies z.ZodType<EvalRun>;

export const evalListReply = z.object({
  evals: z.array(evalRecord.extend({ running: z.boolean(), lastRun: evalRun.nullable() })),
});

export const evalDetailReply = evalRecord.extend({ running: z.boolean(), runs: z.array(evalRun) });
