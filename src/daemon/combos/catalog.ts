import type { ProviderDirectory } from '../providers/directory.js';
import type { ComboRecord, ComboStore } from './store.js';
import { comboContextLength } from './validate.js';

type CatalogServices = { combos: ComboStore; providers: ProviderDirectory };

/** One named combo as a catalog entry: its name, creation time and computed context length. */
export interface ComboCatalogEntry {
  id: string;
  createdAt: string;
  context_length?: number;
}

/** Every named combo (spec, catalog: unnamed combos are skipped; every stored combo has a name). */
export function comboCatalog(services: CatalogServices): ComboCatalogEntry[] {
  return services.combos.list().map((c: ComboRecord) => {
    const entry: ComboCatalogEntry = { id: c.name, createdAt: c.createdAt };
    const ctx = comboContextLength(c, services);
    if (ctx !== undefined) entry.context_length = ctx;
    return entry;
  });
}

const epochSeconds = (iso: string) => Math.floor(Date.parse(iso) / 1000) || 0;

/** Combos in the OpenAI `/v1/models` shape (`owned_by: "combo"`). */
export function openAiComboModels(services: CatalogServices) {
  return comboCatalog(services).map((c) => ({
    id: c.id,
    object: 'model' as const,
    created: epochSeconds(c.createdAt),
    owned_by: 'combo',
    ...(c.context_length ? { context_length: c.context_length } : {}),
  }));
}

/** Combos in the Anthropic models-list shape. */
export function anthropicComboModels(services: CatalogServices) {
  return comboCatalog(services).map((c) => ({
    type: 'model' as const,
    id: c.id,
    display_name: c.id,
    created_at: c.createdAt,
  }));
}

/** Combos in the Gemini `models.list` shape. */
export function geminiComboModels(services: CatalogServices) {
  return comboCatalog(services).map((c) => ({
    name: `models/${c.id}`,
    displayName: c.id,
    ...(c.context_length ? { inputTokenLimit: c.context_length } : {}),
    supportedGenerationMethods: ['generateContent', 'streamGenerateContent', 'countTokens'],
  }));
}
