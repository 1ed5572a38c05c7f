import { anthropic, claudeCode } from './anthropic/index.js';
import { compatibleProviders } from './compatible/index.js';
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

/** Every built-in provider, in catalog order. Adding one is one line here plus its folder. */
export const BUILTIN_PROVIDERS: readonly ProviderDef[] = [
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

const byName = new Map<string, ProviderDef>();
for (const p of BUILTIN_PROVIDERS) {
  for (const name of [p.id, ...(p.aliases ?? [])]) {
    if (byName.has(name)) throw new Error(`provider id or alias used twice: ${name}`);
    byName.set(name, p);
  }
}

/** A built-in provider by id or alias. */
export function builtinProvider(idOrAlias: string): ProviderDef | undefined {
  return byName.get(idOrAlias);
}
