import { describe, expect, it } from 'vitest';
import { modelCapabilities } from '../../src/daemon/providers/capabilities.js';
import { builtinProvider } from '../../src/daemon/providers/registry.js';
import type { ProviderDef } from '../../src/daemon/providers/types.js';

/** What translation needs to know about a model: from the catalog entry, else from the family name. */

const node = { ...builtinProvider('openai')!, id: 'node-1', models: [] } as ProviderDef;

describe('model capabilities', () => {
  it.each([
    ['openai', 'gpt-4o', false, 16_384],
    ['openai', 'gpt-4.1-mini', false, 32_768],
    ['openai', 'o3', true, 100_000],
    ['openai', 'gpt-5-mini', true, 128_000],
    ['codex', 'gpt-5-codex', true, 128_000],
    ['groq', 'openai/gpt-oss-120b', true, undefined],
    ['groq', 'llama-3.3-70b-versatile', false, undefined],
    ['xai', 'grok-4', false, undefined],
    ['anthropic', 'claude-sonnet-4-5', false, 64_000],
    ['anthropic', 'claude-opus-4-1', false, 32_000],
  ])('%s/%s: reasoning_effort %s, max output %s (catalog)', (provider, model, reasoning, max) => {
    expect(modelCapabilities(builtinProvider(provider)!, model)).toMatchObject({ reasoningEffort: reasoning, ...(max ? { maxOutputTokens: max } : {}) });
  });

  it.each([
    ['gpt-4o-2024-08-06', false, undefined],
    ['o4-mini-2025-04-16', true, undefined],
    ['gpt-5.1', true, undefined],
    ['openai/gpt-oss-20b', true, undefined],
    ['llama3.1:8b', false, undefined],
    ['claude-opus-4-20250514', false, 32_000],
    ['claude-sonnet-4-5-20250929', false, 64_000],
  ])('%s outside any catalog: by family name', (model, reasoning, max) => {
    expect(modelCapabilities(node, model)).toMatchObject({ reasoningEffort: reasoning, ...(max ? { maxOutputTokens: max } : {}) });
  });
});

describe('output-limit field', () => {
  it('o-series and gpt-5 models take max_completion_tokens only; others max_tokens (node option auto)', () => {
    expect(modelCapabilities(builtinProvider('openai')!, 'o3').completionTokensOnly).toBe(true);
    expect(modelCapabilities(builtinProvider('openai')!, 'gpt-5-mini').completionTokensOnly).toBe(true);
    expect(modelCapabilities(builtinProvider('openai')!, 'gpt-4o').completionTokensOnly).toBe(false);
  });
});
