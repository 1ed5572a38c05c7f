import type { z } from 'zod';
import { decodeError } from '../../errors.js';
import { formatPath } from '../../util/validate.js';

/**
 * Validates one nested value (an input item, a tool) with its own schema, so the 400 names the exact
 * parameter (`input[3].call_id`) instead of a vague union failure on the whole array.
 */
export function parseAt<S extends z.ZodType>(schema: S, value: unknown, param: string): z.infer<S> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  const sub = issue ? formatPath(issue.path) : '';
  const full = sub === '' ? param : sub.startsWith('[') ? `${param}${sub}` : `${param}.${sub}`;
  throw decodeError(`Invalid value for '${full}': ${issue?.message ?? 'invalid'}`, full);
}
