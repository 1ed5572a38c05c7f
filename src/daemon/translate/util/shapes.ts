import type { UpstreamErrorObject, UpstreamModel } from '../codec.js';

/** A plain JSON object. */
function record(v: unknown): Record<string, unknown> | undefined {
  return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
}

const str = (v: unknown): string | undefined => (typeof v === 'string' && v ? v : undefined);

/** `{data: [{id, context_length?}]}`: the model list of OpenAI, the compatible servers and Anthropic. */
export function parseDataModels(body: unknown): UpstreamModel[] {
  const data = record(body)?.data;
  if (!Array.isArray(data)) return [];
  const out: UpstreamModel[] = [];
  for (const m of data) {
    const id = str(record(m)?.id);
    if (!id) continue;
    const ctx = record(m)?.context_length;
    out.push(typeof ctx === 'number' ? { id, contextLength: ctx } : { id });
  }
  return out;
}

/** OpenAI's error shape `{error: {message, type?, code?, param?}}` (Chat Completions, Responses, completions). */
export function readOpenAiError(parsed: unknown): UpstreamErrorObject | undefined {
  const error = record(record(parsed)?.error);
  const message = error && typeof error.message === 'string' ? error.message : undefined;
  if (message === undefined) return undefined;
  const type = str(error!.type);
  const code = str(error!.code) ?? type;
  return { message, ...(code ? { code } : {}), ...(type ? { type } : {}) };
}
