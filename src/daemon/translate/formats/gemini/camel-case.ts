/**
 * Gemini's REST API takes protobuf JSON, which accepts snake_case field names as well as camelCase
 * (`inline_data`, `system_instruction`, `generation_config`; Google's own curl examples use them). The
 * decoder normalizes to camelCase first, but never inside user data: tool arguments, tool results and
 * JSON schemas keep their keys exactly as written.
 */
const OPAQUE = new Set([
  'args',
  'response',
  'parameters',
  'parametersJsonSchema',
  'responseSchema',
  'responseJsonSchema',
  'responseJsonSchemaOrdered',
  'labels',
]);

function camel(key: string): string {
  return key.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase());
}

/** A copy of `value` with structural keys in camelCase (user-data subtrees untouched). */
export function camelizeKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(camelizeKeys);
  if (typeof value !== 'object' || value === null) return value;
  const out: Record<string, unknown> = {};
  for (const [key, inner] of Object.entries(value)) {
    const name = camel(key);
    out[name] = OPAQUE.has(name) ? inner : camelizeKeys(inner);
  }
  return out;
}
