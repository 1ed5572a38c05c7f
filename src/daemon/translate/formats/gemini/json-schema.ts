import { isRecord } from '../../util/json.js';

/**
 * Gemini's `parameters` and `responseSchema` use its OpenAPI 3.0 subset (`type: 'OBJECT'`, `nullable`,
 * `propertyOrdering`); the IR carries plain JSON Schema. This converts the former into the latter: types
 * lowercased, `nullable` folded into the type, Gemini-only keywords removed. `parametersJsonSchema` and
 * `responseJsonSchema` are JSON Schema already and need no conversion.
 */
export function openApiToJsonSchema(schema: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(schema)) {
    if (key === 'nullable' || key === 'propertyOrdering') continue;
    if (key === 'type' && typeof value === 'string') out.type = value.toLowerCase();
    else if (key === 'properties' && isRecord(value)) out.properties = mapValues(value);
    else if ((key === 'items' || key === 'additionalProperties') && isRecord(value)) out[key] = openApiToJsonSchema(value);
    else if ((key === 'anyOf' || key === 'oneOf' || key === 'allOf') && Array.isArray(value)) out[key] = value.map(convertAny);
    else out[key] = value;
  }
  if (schema.nullable === true && typeof out.type === 'string') out.type = [out.type, 'null'];
  return out;
}

function convertAny(value: unknown): unknown {
  return isRecord(value) ? openApiToJsonSchema(value) : value;
}

function mapValues(properties: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(properties)) out[name] = convertAny(value);
  return out;
}
