import { createHash } from 'node:crypto';
import { tokenCount } from '../reply.js';
import type { MockRequest, Provider } from '../types.js';

export const DEFAULT_MODELS: Record<Provider, string[]> = {
  openai: ['gpt-4o-mini', 'gpt-4.1', 'text-embedding-3-small'],
  anthropic: ['claude-sonnet-4-6', 'claude-haiku-4-5'],
  gemini: ['gemini-2.5-flash', 'gemini-2.5-pro'],
};

/** A fixed past date so listings do not change between runs. */
const CREATED = 1_735_689_600;

export function openaiModelList(ids: string[]) {
  return { object: 'list', data: ids.map((id) => ({ id, object: 'model', created: CREATED, owned_by: 'system' })) };
}

export function anthropicModelList(ids: string[]) {
  const data = ids.map((id) => ({
    type: 'model',
    id,
    display_name: id.replace(/-/g, ' ').replace(/\b\w/g, (c) => c.toUpperCase()),
    created_at: new Date(CREATED * 1000).toISOString(),
  }));
  return { data, has_more: false, first_id: data[0]?.id ?? null, last_id: data.at(-1)?.id ?? null };
}

export function geminiModel(id: string) {
  return {
    name: `models/${id}`,
    version: '001',
    displayName: id,
    description: `Mock of ${id}`,
    inputTokenLimit: 1_048_576,
    outputTokenLimit: 65_536,
    supportedGenerationMethods: ['generateContent', 'countTokens'],
    temperature: 1,
    topP: 0.95,
    topK: 64,
    maxTemperature: 2,
    thinking: true,
  };
}

export function geminiModelList(ids: string[]) {
  return { models: ids.map(geminiModel) };
}

/** A unit-free vector derived from the input text, so equal inputs embed equally across runs. */
function vectorFor(input: string, dims: number): number[] {
  const out: number[] = [];
  for (let block = 0; out.length < dims; block++) {
    const digest = createHash('sha256').update(`${block}:${input}`).digest();
    for (let i = 0; i + 1 < digest.length && out.length < dims; i += 2) out.push(digest.readInt16LE(i) / 32768);
  }
  return out;
}

function toBase64(vec: number[]): string {
  const buf = Buffer.alloc(vec.length * 4);
  vec.forEach((v, i) => buf.writeFloatLE(v, i * 4));
  return buf.toString('base64');
}

/** Normalizes the four shapes `input` may take (string, string[], token ids, arrays of token ids). */
function inputsOf(input: unknown): string[] {
  if (typeof input === 'string') return [input];
  if (!Array.isArray(input)) return [''];
  if (input.every((x) => typeof x === 'number')) return [input.join(' ')];
  return input.map((x) => (typeof x === 'string' ? x : Array.isArray(x) ? x.join(' ') : String(x)));
}

export function embeddingsBody(req: MockRequest, defaultDims: number) {
  const body = req.json ?? {};
  const dims = Number.isInteger(body.dimensions) && body.dimensions > 0 ? body.dimensions : defaultDims;
  const base64 = body.encoding_format === 'base64';
  const inputs = inputsOf(body.input);
  const tokens = inputs.reduce((n, s) => n + Math.max(1, tokenCount(s)), 0);
  return {
    object: 'list',
    data: inputs.map((s, index) => {
      const vec = vectorFor(s, dims);
      return { object: 'embedding', index, embedding: base64 ? toBase64(vec) : vec };
    }),
    model: req.model ?? 'text-embedding-3-small',
    usage: { prompt_tokens: tokens, total_tokens: tokens },
  };
}
