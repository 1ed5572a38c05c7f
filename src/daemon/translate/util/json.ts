/** Parses JSON text, returning `undefined` instead of throwing on invalid input. */
export function tryParseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/**
 * Tool-call arguments as an object, for formats that carry them as structured JSON (Anthropic `input`).
 * Empty or invalid text, or a non-object, yields `{}`: the target format cannot hold anything else.
 */
export function argumentsToObject(text: string): Record<string, unknown> {
  const value = text.trim() === '' ? undefined : tryParseJson(text);
  if (value && typeof value === 'object' && !Array.isArray(value)) return value as Record<string, unknown>;
  return {};
}

/** True for a plain JSON object (not null, not an array). */
export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
