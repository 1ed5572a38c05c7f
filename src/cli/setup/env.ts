/**
 * Provider API keys in the environment `router setup` runs in, with their base URL variables: the names
 * each provider's own SDK and CLI read. A base URL is turned into router's form (with the API version
 * path router's provider definitions use), since SDKs differ on whether the variable includes it.
 */
import type { EnvCredential } from '../../shared/imports.js';

interface EnvSource {
  provider: string;
  keys: string[];
  bases: string[];
  /** The API version path router's base URL for this provider ends with ('' when the variable has it). */
  versionPath: string;
}

const SOURCES: readonly EnvSource[] = [
  // openai SDKs: OPENAI_BASE_URL includes /v1.
  { provider: 'openai', keys: ['OPENAI_API_KEY'], bases: ['OPENAI_BASE_URL', 'OPENAI_API_BASE'], versionPath: '' },
  // Anthropic SDKs and Claude Code: ANTHROPIC_BASE_URL is the host; the SDK adds /v1/messages.
  { provider: 'anthropic', keys: ['ANTHROPIC_API_KEY'], bases: ['ANTHROPIC_BASE_URL'], versionPath: '/v1' },
  // @google/genai and Gemini CLI: GOOGLE_GEMINI_BASE_URL is the host; the SDK adds /v1beta.
  { provider: 'gemini', keys: ['GEMINI_API_KEY', 'GOOGLE_API_KEY'], bases: ['GOOGLE_GEMINI_BASE_URL', 'GEMINI_BASE_URL'], versionPath: '/v1beta' },
  { provider: 'openrouter', keys: ['OPENROUTER_API_KEY'], bases: ['OPENROUTER_BASE_URL'], versionPath: '' },
  { provider: 'groq', keys: ['GROQ_API_KEY'], bases: ['GROQ_BASE_URL'], versionPath: '' },
  { provider: 'deepseek', keys: ['DEEPSEEK_API_KEY'], bases: ['DEEPSEEK_BASE_URL'], versionPath: '' },
  { provider: 'mistral', keys: ['MISTRAL_API_KEY'], bases: ['MISTRAL_BASE_URL'], versionPath: '' },
  { provider: 'xai', keys: ['XAI_API_KEY'], bases: ['XAI_BASE_URL'], versionPath: '' },
  { provider: 'together', keys: ['TOGETHER_API_KEY'], bases: ['TOGETHER_BASE_URL'], versionPath: '' },
  { provider: 'fireworks', keys: ['FIREWORKS_API_KEY'], bases: ['FIREWORKS_BASE_URL'], versionPath: '' },
  { provider: 'cerebras', keys: ['CEREBRAS_API_KEY'], bases: ['CEREBRAS_BASE_URL'], versionPath: '' },
  { provider: 'perplexity', keys: ['PERPLEXITY_API_KEY'], bases: ['PERPLEXITY_BASE_URL'], versionPath: '' },
  { provider: 'moonshot', keys: ['MOONSHOT_API_KEY'], bases: ['MOONSHOT_BASE_URL'], versionPath: '' },
];

/** `http://h/` + `/v1` -> `http://h/v1`; a URL that already ends with the version path stays. */
function routerBase(url: string, versionPath: string): string | undefined {
  let u: URL;
  try {
    u = new URL(url.trim());
  } catch {
    return undefined;
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') return undefined;
  const trimmed = u.toString().replace(/\/+$/, '');
  return versionPath && !trimmed.endsWith(versionPath) ? `${trimmed}${versionPath}` : trimmed;
}

/** The provider keys (and base URLs) set in `env`; the first key variable of a provider that is set wins. */
export function envCredentials(env: NodeJS.ProcessEnv): EnvCredential[] {
  const out: EnvCredential[] = [];
  for (const s of SOURCES) {
    const variable = s.keys.find((k) => env[k]?.trim());
    if (!variable) continue;
    const rawBase = s.bases.map((b) => env[b]?.trim()).find(Boolean);
    const baseUrl = rawBase ? routerBase(rawBase, s.versionPath) : undefined;
    out.push({ variable, provider: s.provider, apiKey: env[variable]!.trim(), ...(baseUrl ? { baseUrl } : {}) });
  }
  return out;
}
