import type { ProviderDef } from '../types.js';

/** A no-auth local server: needs no stored connection, always usable, always in the catalog. */
function local(id: string, name: string, baseUrl: string, models: string[]): ProviderDef {
  return {
    id,
    name,
    kind: 'local',
    format: 'openai-chat',
    baseUrl,
    authKinds: ['none'],
    authHeaders: () => ({}),
    endpoints: { embeddings: true, models: true, completions: true },
    models: models.map((id) => ({ id })),
  };
}

export const ollama = local('ollama', 'Ollama (local)', 'http://127.0.0.1:11434/v1', ['llama3.2', 'qwen2.5-coder', 'nomic-embed-text']);
export const lmstudio = local('lmstudio', 'LM Studio (local)', 'http://127.0.0.1:1234/v1', ['local-model']);
