/**
 * Issue 31 item 3: one usage model whatever the provider's convention. Golden tests per provider: replies
 * recorded from the real APIs (test/fixtures/recorded, from shared/fixtures) and the usage examples the
 * providers document are decoded by each codec, and the tokens and the cost (at the model catalog's rates,
 * or router's) equal the provider's own arithmetic, written out here by hand from its pricing page.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ModelCatalog } from '../../src/daemon/catalog/catalog.js';
import { SHIPPED_SNAPSHOT } from '../../src/daemon/catalog/service.js';
import { readSnapshot } from '../../src/daemon/catalog/snapshot.js';
import { decodeAnthropicUsage } from '../../src/daemon/translate/formats/anthropic/usage.js';
import { decodeUsage as decodeGeminiUsage } from '../../src/daemon/translate/formats/gemini/usage.js';
import { decodeChatUsage } from '../../src/daemon/translate/formats/openai-chat/usage.js';
import { computeCost, DEFAULT_PRICES, type Price } from '../../src/daemon/usage/pricing.js';
import { loadRecording } from '../mocks/recordings.js';

const catalog = new ModelCatalog(readSnapshot(readFileSync(SHIPPED_SNAPSHOT, 'utf8')));
const M = 1_000_000;

function recordedJson(path: string): any {
  return JSON.parse(loadRecording(path)[0]!.response.body);
}

describe('OpenAI (prompt and completion include cached, audio, image and reasoning tokens)', () => {
  it('recorded chat-detailed-usage (gpt-5-nano): reasoning inside completion, billed as output', () => {
    const body = recordedJson('openai/chat-detailed-usage.yaml');
    const u = decodeChatUsage(body.usage)!;
    expect(u).toMatchObject({ inputTokens: 12, outputTokens: 100, reasoningTokens: 100 });
    expect(computeCost(DEFAULT_PRICES.openai!['gpt-5-nano']!, u)).toBeCloseTo((12 * 0.05 + 100 * 0.4) / M, 15);
  });

  it('recorded chat-audio-to-text (gpt-4o-audio-preview): the audio token of the prompt at the audio rate', () => {
    const body = recordedJson('openai/chat-audio-to-text.yaml');
    const u = decodeChatUsage(body.usage)!;
    expect(u).toMatchObject({ inputTokens: 28, outputTokens: 17, audioInputTokens: 1 });
    // openai.com pricing: gpt-4o-audio-preview text $2.50 / $10, audio $40 / $80 per million
    const price: Price = { input: 2.5, output: 10, audioInput: 40, audioOutput: 80 };
    expect(computeCost(price, u)).toBeCloseTo((27 * 2.5 + 1 * 40 + 17 * 10) / M, 15);
  });

  it("documented prompt caching example: cached_tokens at the catalog's cache-read rate", () => {
    // platform.openai.com/docs/guides/prompt-caching: usage of a cached request
    const u = decodeChatUsage({ prompt_tokens: 2006, completion_tokens: 300, total_tokens: 2306, prompt_tokens_details: { cached_tokens: 1920 }, completion_tokens_details: { reasoning_tokens: 0 } })!;
    const price = catalog.price('openai', 'gpt-4o')!;
    expect(price).toMatchObject({ input: 2.5, output: 10, cacheRead: 1.25 });
    expect(computeCost(price, u)).toBeCloseTo(((2006 - 1920) * 2.5 + 1920 * 1.25 + 300 * 10) / M, 15);
  });
});

describe('Anthropic (input_tokens excludes cache reads and writes; writes split 5-minute / 1-hour)', () => {
  it('recorded test_opus_46_prompt stream: message_start and message_delta usage', () => {
    const rec = loadRecording('anthropic/llm-anthropic/test_opus_46_prompt.yaml')[0]!.response.body;
    const events = rec
      .split('\n')
      .filter((l) => l.startsWith('data: '))
      .map((l) => JSON.parse(l.slice(6)));
    const start = decodeAnthropicUsage(events.find((e) => e.type === 'message_start').message.usage);
    const end = decodeAnthropicUsage(events.find((e) => e.type === 'message_delta').usage);
    const u = { ...start, ...end, inputTokens: end.inputTokens ?? start.inputTokens!, outputTokens: end.outputTokens! };
    expect(u).toMatchObject({ inputTokens: 17, outputTokens: 20, cacheReadTokens: 0, cacheWriteTokens: 0 });
    expect(computeCost(DEFAULT_PRICES.anthropic!['claude-opus-4-6']!, u)).toBeCloseTo((17 * 5 + 20 * 25) / M, 15);
  });

  it("documented cache example: reads, 5-minute and 1-hour writes at the catalog's rates", () => {
    // platform.claude.com/docs/en/build-with-claude/prompt-caching: usage with cache_creation by lifetime
    const u = decodeAnthropicUsage({
      input_tokens: 50,
      cache_read_input_tokens: 10_000,
      cache_creation_input_tokens: 2_000,
      cache_creation: { ephemeral_5m_input_tokens: 500, ephemeral_1h_input_tokens: 1_500 },
      output_tokens: 300,
    });
    expect(u).toEqual({ inputTokens: 12_050, cacheReadTokens: 10_000, cacheWriteTokens: 2_000, cacheWrite1hTokens: 1_500, outputTokens: 300 });
    const price = catalog.price('anthropic', 'claude-3-7-sonnet')!;
    expect(price).toMatchObject({ input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 });
    // Anthropic's arithmetic: base input, cache hits at 0.1x, 5m writes at 1.25x, 1h writes at 2x, output
    expect(computeCost(price, { ...u, inputTokens: u.inputTokens!, outputTokens: u.outputTokens! })).toBeCloseTo((50 * 3 + 10_000 * 0.3 + 500 * 3.75 + 1_500 * 6 + 300 * 15) / M, 15);
  });
});

describe('Gemini (promptTokenCount includes cached content; thoughts are billed as output)', () => {
  it("documented usageMetadata: cached content, thoughts and an audio prompt at the catalog's rates", () => {
    // ai.google.dev/api/generate-content#UsageMetadata: per-modality details of the prompt
    const u = decodeGeminiUsage({
      promptTokenCount: 1_200,
      cachedContentTokenCount: 600,
      candidatesTokenCount: 50,
      thoughtsTokenCount: 100,
      totalTokenCount: 1_350,
      promptTokensDetails: [
        { modality: 'TEXT', tokenCount: 1_000 },
        { modality: 'AUDIO', tokenCount: 200 },
      ],
    })!;
    expect(u).toEqual({ inputTokens: 1_200, outputTokens: 150, cacheReadTokens: 600, reasoningTokens: 100, audioInputTokens: 200 });
    const price = catalog.price('gemini', 'gemini-2.5-flash')!;
    expect(price).toMatchObject({ input: 0.3, output: 2.5, cacheRead: 0.075 });
    // ai.google.dev pricing for 2.5 Flash: audio input $1.00 per million
    const withAudio: Price = { ...price, audioInput: 1 };
    expect(computeCost(withAudio, u)).toBeCloseTo(((1_000 - 600) * 0.3 + 600 * 0.075 + 200 * 1 + 50 * 2.5 + 100 * 2.5) / M, 15);
  });
});
