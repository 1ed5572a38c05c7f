import { bearer, type ProviderDef } from '../types.js';

/**
 * Rerank-first providers. Each also serves embeddings; Cohere serves chat through its OpenAI compatibility
 * API (the base URL), while its rerank lives at the native `/v2/rerank` of the same host. Jina and Voyage
 * have no chat endpoint: a chat request to them is answered by the provider's own 404.
 */
export const cohere: ProviderDef = {
  id: 'cohere',
  name: 'Cohere',
  kind: 'cloud',
  format: 'openai-chat',
  baseUrl: 'https://api.cohere.ai/compatibility/v1',
  authKinds: ['api-key'],
  authHeaders: bearer,
  endpoints: { embeddings: true },
  rerank: { dialect: 'cohere', path: '/v2/rerank' },
  models: [
    { id: 'rerank-v4.0-pro', contextLength: 32_768 },
    { id: 'rerank-v4.0-fast', contextLength: 32_768 },
    { id: 'rerank-v3.5', contextLength: 4_096 },
    { id: 'rerank-english-v3.0', contextLength: 4_096 },
    { id: 'rerank-multilingual-v3.0', contextLength: 4_096 },
    { id: 'command-a-03-2025', contextLength: 256_000 },
    { id: 'embed-v4.0', contextLength: 128_000 },
  ],
};

export const jina: ProviderDef = {
  id: 'jina',
  name: 'Jina AI',
  kind: 'cloud',
  format: 'openai-chat',
  baseUrl: 'https://api.jina.ai/v1',
  authKinds: ['api-key'],
  authHeaders: bearer,
  endpoints: { embeddings: true },
  rerank: { dialect: 'jina', path: 'rerank' },
  models: [
    { id: 'jina-reranker-v3', contextLength: 131_072 },
    { id: 'jina-reranker-m0', contextLength: 10_240 },
    { id: 'jina-reranker-v2-base-multilingual', contextLength: 1_024 },
    { id: 'jina-embeddings-v3', contextLength: 8_192 },
  ],
};

export const voyage: ProviderDef = {
  id: 'voyage',
  name: 'Voyage AI',
  kind: 'cloud',
  format: 'openai-chat',
  baseUrl: 'https://api.voyageai.com/v1',
  authKinds: ['api-key'],
  authHeaders: bearer,
  endpoints: { embeddings: true },
  rerank: { dialect: 'voyage', path: 'rerank' },
  models: [
    { id: 'rerank-2.5', contextLength: 32_000 },
    { id: 'rerank-2.5-lite', contextLength: 32_000 },
    { id: 'voyage-3.5', contextLength: 32_000 },
  ],
};
