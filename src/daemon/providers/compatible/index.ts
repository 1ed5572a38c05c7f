import { bearer, type ModelInfo, type ProviderDef } from '../types.js';

/** Builds an OpenAI-compatible API-key provider: a few lines each. */
function compatible(id: string, name: string, baseUrl: string, models: ModelInfo[], extra: Partial<ProviderDef> = {}): ProviderDef {
  return {
    id,
    name,
    kind: 'cloud',
    format: 'openai-chat',
    baseUrl,
    authKinds: ['api-key'],
    authHeaders: bearer,
    endpoints: { embeddings: true, models: true },
    models,
    ...extra,
  };
}

const m = (id: string, contextLength?: number, extra: Partial<ModelInfo> = {}): ModelInfo => ({ id, contextLength, ...extra });

/** OpenAI-compatible cloud providers. */
export const compatibleProviders: ProviderDef[] = [
  compatible('openrouter', 'OpenRouter', 'https://openrouter.ai/api/v1', [
    m('openai/gpt-4o', 128_000),
    m('anthropic/claude-sonnet-4.5', 1_000_000),
    m('google/gemini-2.5-pro', 1_048_576),
  ]),
  compatible('groq', 'Groq', 'https://api.groq.com/openai/v1', [m('llama-3.3-70b-versatile', 131_072), m('openai/gpt-oss-120b', 131_072, { reasoning: true })], {
    // Whisper transcription/translation and PlayAI/Orpheus speech (console.groq.com/docs/speech-to-text, text-to-speech).
    endpoints: { embeddings: true, models: true, speech: true, transcriptions: true, translations: true },
  }),
  compatible('deepseek', 'DeepSeek', 'https://api.deepseek.com/v1', [m('deepseek-chat', 128_000), m('deepseek-reasoner', 128_000)]),
  compatible('mistral', 'Mistral', 'https://api.mistral.ai/v1', [m('mistral-large-latest', 128_000), m('codestral-latest', 256_000)]),
  compatible('xai', 'xAI', 'https://api.x.ai/v1', [m('grok-4', 256_000), m('grok-3-mini', 131_072, { reasoning: true })], {
    aliases: ['grok'],
    // grok-2-image / grok-imagine-image on /v1/images/generations (docs.x.ai image generation).
    endpoints: { embeddings: true, models: true, images: true },
  }),
  compatible('together', 'Together AI', 'https://api.together.xyz/v1', [m('meta-llama/Llama-3.3-70B-Instruct-Turbo', 131_072)], {
    endpoints: { embeddings: true, models: true, completions: true, images: true, speech: true, transcriptions: true, translations: true },
    // Together's /v1/rerank takes the Cohere/Jina shape (documents as strings or objects, rank_fields).
    rerank: { dialect: 'jina', path: 'rerank' },
  }),
  compatible('fireworks', 'Fireworks AI', 'https://api.fireworks.ai/inference/v1', [m('accounts/fireworks/models/llama-v3p3-70b-instruct', 131_072)], {
    endpoints: { embeddings: true, models: true, completions: true },
  }),
  compatible('cerebras', 'Cerebras', 'https://api.cerebras.ai/v1', [m('llama-3.3-70b', 65_536), m('qwen-3-32b', 65_536)]),
  compatible('perplexity', 'Perplexity', 'https://api.perplexity.ai', [m('sonar', 127_072), m('sonar-pro', 200_000)]),
  compatible('deepinfra', 'DeepInfra', 'https://api.deepinfra.com/v1/openai', [m('meta-llama/Llama-3.3-70B-Instruct', 131_072)], {
    endpoints: { embeddings: true, models: true, images: true, speech: true, transcriptions: true },
  }),
  compatible('nvidia', 'NVIDIA NIM', 'https://integrate.api.nvidia.com/v1', [m('meta/llama-3.3-70b-instruct', 131_072)]),
  compatible('sambanova', 'SambaNova', 'https://api.sambanova.ai/v1', [m('Meta-Llama-3.3-70B-Instruct', 131_072)]),
  compatible('hyperbolic', 'Hyperbolic', 'https://api.hyperbolic.xyz/v1', [m('meta-llama/Llama-3.3-70B-Instruct', 131_072)]),
  compatible('moonshot', 'Moonshot AI', 'https://api.moonshot.ai/v1', [m('kimi-k2-0905-preview', 262_144)]),
  compatible('zai', 'Z.ai', 'https://api.z.ai/api/paas/v4', [m('glm-4.6', 200_000)]),
];
