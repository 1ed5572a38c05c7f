import { z } from 'zod';

const text = (max: number) => z.string().min(1).max(max);

// Flags a check's regex may use (no `g`/`y`: they make test() stateful).
const FLAGS_RE = /^[imsu]{0,4}$/;

const check = z.discriminatedUnion('type', [
  z.object({ type: z.literal('contains'), value: text(2000), ignoreCase: z.boolean().optional() }).strict(),
  z.object({ type: z.literal('not-contains'), value: text(2000), ignoreCase: z.boolean().optional() }).strict(),
  z.object({ type: z.literal('equals'), value: z.string().max(20_000), ignoreCase: z.boolean().optional() }).strict(),
  z
    .object({ type: z.literal('regex'), value: text(500), flags: z.string().regex(FLAGS_RE, 'flags among i, m, s, u').optional() })
    .strict()
    .refine(
      (c) => {
        try {
          new RegExp(c.value, c.flags ?? '');
          return true;
        } catch {
          return false;
        }
      },
      { message: 'not a valid regular expression', path: ['value'] },
    ),
  z.object({ type: z.literal('json-valid') }).strict(),
]);

const evalCase = z
  .object({
    name: z.string().max(200).optional(),
    system: z.string().max(20_000).optional(),
    prompt: text(50_000),
    checks: z.array(check).min(1).max(20),
  })
  .strict();

/** A model or combo name as the proxy accepts it. */
const model = z.string().trim().min(1).max(200);

/** `POST /api/evals`: at most 50 cases x 10 models per run, so a run stays a few hundred calls. */
export const evalBody = z
  .object({
    name: z.string().trim().min(1).max(100),
    description: z.string().max(2000).default(''),
    models: z.array(model).min(1).max(10).refine((m) => new Set(m).size === m.length, 'models must be distinct'),
    cases: z.array(evalCase).min(1).max(50),
    maxTokens: z.number().int().min(1).max(8192).default(512),
    concurrency: z.number().int().min(1).max(8).default(2),
  })
  .strict();

export type EvalBody = z.infer<typeof evalBody>;

/** `POST /api/evals/{id}/run`: optionally a subset or other models, and whether to wait for the scores. */
export const runBody = z
  .object({
    models: z.array(model).min(1).max(10).refine((m) => new Set(m).size === m.length, 'models must be distinct').optional(),
    wait: z.boolean().default(false),
  })
  .strict();
