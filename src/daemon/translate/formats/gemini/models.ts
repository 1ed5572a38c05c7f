import type { UpstreamModel } from '../../codec.js';

/** Gemini's model list `{models: [{name: 'models/<id>', inputTokenLimit}]}`. */
export function parseGeminiModels(body: unknown): UpstreamModel[] {
  const models = (body as { models?: unknown } | null)?.models;
  if (!Array.isArray(models)) return [];
  const out: UpstreamModel[] = [];
  for (const m of models as Array<{ name?: unknown; inputTokenLimit?: unknown }>) {
    if (typeof m?.name !== 'string') continue;
    const id = m.name.replace(/^models\//, '');
    out.push(typeof m.inputTokenLimit === 'number' ? { id, contextLength: m.inputTokenLimit } : { id });
  }
  return out;
}
