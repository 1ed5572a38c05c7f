import { anthropic, claudeCode } from './anthropic/index.js';
import { compatibleProviders } from './compatible/index.js';
import { catalogProviders } from './compatible/catalog.js';
import { gemini } from './gemini/index.js';
import { lmstudio, ollama } from './local/index.js';
import { codex, openai } from './openai/index.js';
import { cohere, jina, voyage } from './rerank/index.js';
import { webSession } from './session/index.js';
import { antigravity, geminiCli } from './google/index.js';
import { githubCopilot } from './copilot/index.js';
import { qwenCode } from './qwen/index.js';
import { devinCli, windsurf } from './ide/index.js';
import type { ProviderDef } from './types.js';

/** The providers written in code, in catalog order. Adding one is one line here plus its folder. */
const CODED_PROVIDERS: readonly ProviderDef[] = [
  openai,
  anthropic,
  gemini,
  ...compatibleProviders,
  cohere,
  jina,
  voyage,
  ollama,
  lmstudio,
  codex,
  claudeCode,
  geminiCli,
  githubCopilot,
  qwenCode,
  antigravity,
  windsurf,
  devinCli,
  webSession,
];

const coded = new Set(CODED_PROVIDERS.flatMap((p) => [p.id, ...(p.aliases ?? [])]));

/**
 * Every built-in provider: those written in code, then every OpenAI- or Anthropic-compatible provider of
 * the model catalog that none of them already is (data only: compatible/catalog.ts).
 */
export const BUILTIN_PROVIDERS: readonly ProviderDef[] = [...CODED_PROVIDERS, ...catalogProviders((id) => coded.has(id))];

const byName = new Map<string, ProviderDef>();
for (const p of BUILTIN_PROVIDERS) {
  for (const name of [p.id, ...(p.aliases ?? [])]) {
    if (byName.has(name)) throw new Error(`provider id or alias used twice: ${name}`);
    byName.set(name, p);
  }
}

/** Whether a provider written in code has this id or alias (a catalog data provider never replaces it). */
export function codedProvider(idOrAlias: string): boolean {
  return coded.has(idOrAlias);
}

/** A built-in provider by id or alias. */
export function builtinProvider(idOrAlias: string): ProviderDef | undefined {
  return byName.get(idOrAlias);
}
