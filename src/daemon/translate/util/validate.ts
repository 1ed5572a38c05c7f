import type { z } from 'zod';
import { decodeError } from '../errors.js';

/** Renders a zod issue path the way API errors name parameters: `messages[0].content`. */
export function formatPath(path: ReadonlyArray<PropertyKey>): string {
  let out = '';
  for (const key of path) {
    if (typeof key === 'number') out += `[${key}]`;
    else out += out ? `.${String(key)}` : String(key);
  }
  return out;
}

/**
 * Validates a client body with a zod schema. The first issue becomes a 400 naming the parameter, so a
 * client sees the same kind of error the provider would have returned.
 */
export function parseBody<S extends z.ZodType>(schema: S, body: unknown): z.infer<S> {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw decodeError('The request body must be a JSON object.');
  }
  const result = schema.safeParse(body);
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  const param = issue ? formatPath(issue.path) : undefined;
  const message = issue ? `Invalid value for '${param || 'body'}': ${issue.message}` : 'Invalid request body.';
  throw decodeError(message, param || undefined);
}

/**
 * Validates one nested value (e.g. a content block picked by its `type`), naming the parameter from
 * `prefix` plus the issue's own path, so errors in blocks read like `messages[1].content[0].tool_use_id`.
 */
export function parseAt<S extends z.ZodType>(schema: S, value: unknown, prefix: string): z.infer<S> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  const rest = issue ? formatPath(issue.path) : '';
  const param = rest ? (rest.startsWith('[') ? `${prefix}${rest}` : `${prefix}.${rest}`) : prefix;
  throw decodeError(`Invalid value for '${param}': ${issue?.message ?? 'invalid input'}`, param);
}
