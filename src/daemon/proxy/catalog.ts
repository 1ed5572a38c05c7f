import type { PipelineDeps } from './deps.js';
import { anthropicComboModels, geminiComboModels, openAiComboModels } from '../combos/catalog.js';

/** GET /v1/models in the OpenAI list shape. */
export function openAiModelList(services: PipelineDeps) {
  return {
    object: 'list',
    data: [
      ...openAiComboModels(services),
      ...services.providers.catalog().map((m) => ({
        id: m.id,
        object: 'model',
        created: 0,
        owned_by: m.provider,
        ...(m.context_length ? { context_length: m.context_length } : {}),
      })),
    ],
  };
}

/** GET /v1/models in the Anthropic shape (the Anthropic SDK sends `anthropic-version`). */
export function anthropicModelList(services: PipelineDeps) {
  const data = [
    ...anthropicComboModels(services),
    ...services.providers.catalog().map((m) => ({
      type: 'model',
      id: m.id,
      display_name: m.id,
      created_at: '1970-01-01T00:00:00Z',
    })),
  ];
  return { data, has_more: false, first_id: data[0]?.id ?? null, last_id: data.at(-1)?.id ?? null };
}

/**
 * GET /v1beta/models: the catalog restricted to providers with an active connection (no-auth local
 * providers count as connected: they need none), in the Gemini `models.list` shape.
 */
export function geminiModelList(services: PipelineDeps) {
  return {
    models: [
      ...geminiComboModels(services),
      ...services.providers.catalog(true).map((m) => ({
        name: `models/${m.id}`,
        displayName: m.id,
        ...(m.context_length ? { inputTokenLimit: m.context_length } : {}),
        supportedGenerationMethods: ['generateContent', 'streamGenerateContent', 'countTokens'],
      })),
    ],
  };
}
