/**
 * The model catalog's stored form (docs/catalog.md). models.dev publishes one JSON document, `api.json`:
 * provider id -> {name, npm, api, doc, env, models: model id -> {limit, modalities, cost, ...}}. router keeps
 * a compact copy of it: one array per model, the fields in `MODEL_FIELDS` order, so the shipped snapshot
 * (catalog/models.json) stays small, reads as one model a line in a diff, and parses in a few milliseconds.
 * The generator (scripts/catalog-generate.mjs) and `router catalog update` both go through `compactSnapshot`.
 */

/**
 * models.dev's provider ids that router names differently (every other catalog id is router's id too).
 * The catalog's entries are listed and priced under router's id, so `gemini/gemini-2.5-pro` finds
 * models.dev's `google/gemini-2.5-pro`.
 */
export const ROUTER_PROVIDER_ID: Readonly<Record<string, string>> = {
  google: 'gemini',
  'fireworks-ai': 'fireworks',
  togetherai: 'together',
  moonshotai: 'moonshot',
};

/** A provider of models.dev's api.json (only the fields router reads). */
interface ModelsDevProvider {
  name?: unknown;
  npm?: unknown;
  api?: unknown;
  doc?: unknown;
  env?: unknown;
  models?: unknown;
}

/** A model of models.dev's api.json (only the fields router reads). */
interface ModelsDevModel {
  name?: unknown;
  reasoning?: unknown;
  tool_call?: unknown;
  attachment?: unknown;
  modalities?: unknown;
  cost?: unknown;
  limit?: unknown;
  last_updated?: unknown;
}

/** The order of a compact model's fields. Prices are USD per million tokens, null when not published. */
export const MODEL_FIELDS = [
  'id',
  'name',
  'contextWindow',
  'maxOutputTokens',
  'inputModalities',
  'outputModalities',
  'flags',
  'input',
  'output',
  'cacheRead',
  'cacheWrite',
  'reasoning',
  'inputAudio',
  'outputAudio',
] as const;

/**
 * One model: id, name, context window, max output tokens, input and output modalities (comma-separated),
 * flags (`r` reasoning, `t` tool calls, `a` attachments), then the prices in MODEL_FIELDS order.
 */
export type CompactModel = [
  id: string,
  name: string,
  contextWindow: number | null,
  maxOutputTokens: number | null,
  inputModalities: string,
  outputModalities: string,
  flags: string,
  input: number | null,
  output: number | null,
  cacheRead: number | null,
  cacheWrite: number | null,
  reasoning: number | null,
  inputAudio: number | null,
  outputAudio: number | null,
];

export interface CompactProvider {
  name: string;
  /** The AI SDK package models.dev names for it: `@ai-sdk/openai-compatible` means an OpenAI-compatible API. */
  npm: string | null;
  /** Its API base URL, when models.dev knows one (OpenAI-compatible providers). */
  api: string | null;
  doc: string | null;
  /** Environment variables holding its API key. */
  env: string[];
  models: CompactModel[];
}

export interface Snapshot {
  format: 1;
  /** Names the data: `models.dev@<date>`, the date the newest model entry was updated. */
  version: string;
  /** Where the data came from (the npm package and version, or the URL). */
  source: string;
  fields: typeof MODEL_FIELDS;
  providers: Record<string, CompactProvider>;
}

/** The document was not a models.dev catalog (the update keeps what it has). */
export class CatalogFormatError extends Error {}

const PRICE_KEYS = ['input', 'output', 'cache_read', 'cache_write', 'reasoning', 'input_audio', 'output_audio'] as const;

/**
 * The compact snapshot of a models.dev api.json document. Malformed entries are skipped one by one;
 * a document with no usable provider throws CatalogFormatError.
 */
export function compactSnapshot(doc: unknown, source: string): Snapshot {
  if (!isObject(doc)) throw new CatalogFormatError('not a JSON object of providers');
  const providers: Record<string, CompactProvider> = {};
  let newest = '';
  for (const id of Object.keys(doc).sort()) {
    const p = doc[id] as ModelsDevProvider;
    if (!isObject(p) || !isObject(p.models) || !/^[a-z0-9][a-z0-9._-]{0,63}$/.test(id)) continue;
    const models: CompactModel[] = [];
    for (const modelId of Object.keys(p.models).sort()) {
      const m = p.models[modelId] as ModelsDevModel;
      if (!isObject(m) || modelId.length > 200) continue;
      const cost = isObject(m.cost) ? m.cost : {};
      const limit = isObject(m.limit) ? m.limit : {};
      const mods = isObject(m.modalities) ? m.modalities : {};
      const flags = `${m.reasoning === true ? 'r' : ''}${m.tool_call === true ? 't' : ''}${m.attachment === true ? 'a' : ''}`;
      models.push([
        modelId,
        str(m.name) ?? modelId,
        count(limit.context),
        count(limit.output),
        modalities(mods.input),
        modalities(mods.output),
        flags,
        ...(PRICE_KEYS.map((k) => rate(cost[k])) as [number | null, number | null, number | null, number | null, number | null, number | null, number | null]),
      ]);
      const updated = str(m.last_updated);
      if (updated && /^\d{4}-\d{2}(-\d{2})?$/.test(updated) && updated > newest) newest = updated;
    }
    if (models.length === 0) continue;
    providers[id] = {
      name: str(p.name) ?? id,
      npm: str(p.npm) ?? null,
      api: typeof p.api === 'string' && /^https?:\/\//.test(p.api) ? p.api : null,
      doc: str(p.doc) ?? null,
      env: Array.isArray(p.env) ? p.env.filter((e): e is string => typeof e === 'string') : [],
      models,
    };
  }
  if (Object.keys(providers).length === 0) throw new CatalogFormatError('no provider with models');
  return { format: 1, version: `models.dev@${newest || 'unknown'}`, source, fields: MODEL_FIELDS, providers };
}

/** A catalog provider router serves as a built-in provider from data alone (catalog/providers.json). */
export interface DataProvider {
  /** router's id (ROUTER_PROVIDER_ID). */
  id: string;
  name: string;
  /** The API base, as the AI SDK's own provider takes it: `{baseUrl}/chat/completions` (or `/messages`). */
  baseUrl: string;
  format: 'openai-chat' | 'anthropic';
  /** Environment variables models.dev names for its API key. */
  env: string[];
  doc: string | null;
}

/** The wire formats router speaks by models.dev's AI SDK package name. */
const DATA_FORMATS: Readonly<Record<string, DataProvider['format']>> = {
  '@ai-sdk/openai-compatible': 'openai-chat',
  '@ai-sdk/anthropic': 'anthropic',
};

/**
 * The providers of a snapshot that speak an OpenAI- or Anthropic-compatible API at a known https base
 * URL: each becomes a built-in provider as data (providers/catalog-providers.ts). Local servers
 * (http://127.0.0.1...) are left out: router has its own local providers.
 */
export function dataProviders(s: Snapshot): DataProvider[] {
  const out: DataProvider[] = [];
  for (const [id, p] of Object.entries(s.providers)) {
    const format = p.npm ? DATA_FORMATS[p.npm] : undefined;
    if (!format || !p.api?.startsWith('https://')) continue;
    out.push({ id: ROUTER_PROVIDER_ID[id] ?? id, name: p.name, baseUrl: p.api.replace(/\/+$/, ''), format, env: p.env, doc: p.doc });
  }
  return out;
}

/** The data providers as stored: one a line. */
export function serializeDataProviders(version: string, providers: DataProvider[]): string {
  return `{
"version": ${JSON.stringify(version)},
"providers": [
${providers.map((p) => JSON.stringify(p)).join(',\n')}
]
}
`;
}

/** Checks a stored snapshot (the shipped one or one an update wrote); throws CatalogFormatError. */
export function readSnapshot(text: string): Snapshot {
  const s = JSON.parse(text) as Snapshot;
  if (!isObject(s) || s.format !== 1 || typeof s.version !== 'string' || !isObject(s.providers)) throw new CatalogFormatError('not a router catalog snapshot');
  return s;
}

/** The snapshot as stored: one provider header and one model a line, so a regenerated copy diffs well. */
export function serializeSnapshot(s: Snapshot): string {
  const lines = ['{', `"format": 1,`, `"version": ${JSON.stringify(s.version)},`, `"source": ${JSON.stringify(s.source)},`, `"fields": ${JSON.stringify(s.fields)},`, '"providers": {'];
  const ids = Object.keys(s.providers);
  ids.forEach((id, i) => {
    const { models, ...head } = s.providers[id]!;
    lines.push(`${JSON.stringify(id)}: ${JSON.stringify(head).slice(0, -1)}, "models": [`);
    models.forEach((m, j) => lines.push(`${JSON.stringify(m)}${j < models.length - 1 ? ',' : ''}`));
    lines.push(`]}${i < ids.length - 1 ? ',' : ''}`);
  });
  lines.push('}', '}', '');
  return lines.join('\n');
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function str(v: unknown): string | undefined {
  return typeof v === 'string' && v.length > 0 && v.length <= 500 ? v : undefined;
}

function count(v: unknown): number | null {
  return typeof v === 'number' && Number.isFinite(v) && v > 0 ? Math.round(v) : null;
}

function rate(v: unknown): number | null {
  return typeof v === 'number' && Number.isFinite(v) && v >= 0 ? v : null;
}

function modalities(v: unknown): string {
  return Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string' && /^[a-z]{1,20}$/.test(x)).join(',') : '';
}
