import { readFileSync } from 'node:fs';
import type { DataProvider } from '../../catalog/snapshot.js';
import { bearer, type Credential, type ProviderDef } from '../types.js';

/**
 * The catalog's OpenAI- and Anthropic-compatible providers (catalog/providers.json, written by
 * scripts/catalog-generate.mjs from models.dev data): each a built-in provider from data alone, its models
 * and prices those of the model catalog (docs/catalog.md). Read once at start: a few KB.
 */
export const CATALOG_PROVIDERS_FILE = new URL('../../../../catalog/providers.json', import.meta.url);

/** The provider of one data entry: API-key auth, the catalog's models (ProviderDirectory.models). */
export function dataProvider(p: DataProvider): ProviderDef {
  const base = { id: p.id, name: p.name, kind: 'cloud' as const, baseUrl: p.baseUrl, authKinds: ['api-key' as const], models: [], catalogModels: true };
  if (p.format === 'anthropic') {
    return {
      ...base,
      format: 'anthropic',
      authHeaders: (cred: Credential): Record<string, string> => (cred.apiKey ? { 'x-api-key': cred.apiKey } : {}),
      headers: { 'anthropic-version': '2023-06-01' },
      endpoints: { models: true },
    };
  }
  return { ...base, format: 'openai-chat', authHeaders: bearer, endpoints: { models: true } };
}

/** The data providers whose id no provider written in code (or its alias) already has. */
export function catalogProviders(taken: (id: string) => boolean, file: URL | string = CATALOG_PROVIDERS_FILE): ProviderDef[] {
  const { providers } = JSON.parse(readFileSync(file, 'utf8')) as { providers: DataProvider[] };
  return providers.filter((p) => !taken(p.id)).map(dataProvider);
}
