import { bearer, type ProviderDef } from '../types.js';

/** OpenAI: chat, responses, legacy completions, embeddings, images, audio and moderations natively. */
export const openai: ProviderDef = {
  id: 'openai',
  name: 'OpenAI',
  kind: 'cloud',
  format: 'openai-chat',
  baseUrl: 'https://api.openai.com/v1',
  authKinds: ['api-key'],
  authHeaders: bearer,
  aliases: ['oai'],
  endpoints: {
    responses: true,
    completions: true,
    embeddings: true,
    models: true,
    images: true,
    imageEdits: true,
    speech: true,
    transcriptions: true,
    translations: true,
    moderations: true,
  },
  chatTokenLimit: 'max_completion_tokens',
  models: [
    { id: 'gpt-5', contextLength: 400_000, maxOutputTokens: 128_000, reasoning: true },
    { id: 'gpt-5-mini', contextLength: 400_000, maxOutputTokens: 128_000, reasoning: true },
    { id: 'gpt-5-nano', contextLength: 400_000, maxOutputTokens: 128_000, reasoning: true },
    { id: 'gpt-4.1', contextLength: 1_047_576, maxOutputTokens: 32_768 },
    { id: 'gpt-4.1-mini', contextLength: 1_047_576, maxOutputTokens: 32_768 },
    { id: 'gpt-4o', contextLength: 128_000, maxOutputTokens: 16_384 },
    { id: 'gpt-4o-mini', contextLength: 128_000, maxOutputTokens: 16_384 },
    { id: 'o3', contextLength: 200_000, maxOutputTokens: 100_000, reasoning: true },
    { id: 'o4-mini', contextLength: 200_000, maxOutputTokens: 100_000, reasoning: true },
    { id: 'gpt-3.5-turbo-instruct', contextLength: 4_096 },
    { id: 'text-embedding-3-small', contextLength: 8_191 },
    { id: 'text-embedding-3-large', contextLength: 8_191 },
  ],
};

export { codex } from './codex.js';
