/**
 * Issue 31 item 3 through the real daemon: replies recorded from the real APIs (test/fixtures/recorded) and
 * the usage examples the providers document, served by the mock upstream, are recorded as usage rows whose
 * tokens (1-hour cache writes, audio and image parts included, migration 0026) and cost equal the
 * provider's own arithmetic at the model catalog's rates (or the user's price where the catalog has none).
 * GET /api/logs rows and the /api/usage/summary and breakdown totals show the parts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startMockUpstream, type MockUpstream } from '../mocks/upstream.js';
import { eventually, spawnDaemon, type Daemon } from './helpers.js';

let mock: MockUpstream;
let router: Daemon;
let key: string;
let catalogVersion: string;
const M = 1_000_000;

beforeAll(async () => {
  mock = await startMockUpstream();
  router = await spawnDaemon();
  key = await router.createKey();
  await router.addConnection({ provider: 'openai', apiKey: 'sk-up', providerSpecificData: { baseUrl: mock.openaiBase } });
  await router.addConnection({ provider: 'anthropic', apiKey: 'sk-ant-up', providerSpecificData: { baseUrl: mock.anthropicBase } });
  await router.addConnection({ provider: 'gemini', apiKey: 'gem-up', providerSpecificData: { baseUrl: mock.geminiBase } });
  catalogVersion = (await router.manage('GET', '/api/catalog/models?provider=openai')).json.version;
});
afterAll(async () => {
  await router?.stop();
  await mock?.close();
});

/** Sends one proxied call; returns its trace id and the reply text. */
async function call(path: string, body: Record<string, unknown>): Promise<{ trace: string; text: string }> {
  const res = await fetch(`${router.url}${path}`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const text = await res.text();
  expect(res.status, text).toBe(200);
  return { trace: res.headers.get('x-router-trace-id')!, text };
}

async function rowOf(trace: string): Promise<any> {
  return eventually(async () => {
    const r = await router.manage('GET', '/api/logs?limit=500');
    return (r.json.logs as any[]).find((l) => l.traceId === trace);
  });
}

/** The mock answers the next request with exactly this JSON body. */
function replyJson(body: unknown): void {
  mock.handle(() => ({
    type: 'custom',
    fn: (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    },
  }));
}

/** The mock answers the next request with these SSE events (`event:` lines from each event's type). */
function replySse(events: Array<Record<string, unknown>>): void {
  mock.handle(() => ({
    type: 'custom',
    fn: (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.end(events.map((e) => `event: ${e.type}\ndata: ${JSON.stringify(e)}\n\n`).join(''));
    },
  }));
}

const ZERO_PARTS = { cacheWrite1hTokens: 0, audioInputTokens: 0, audioOutputTokens: 0, imageInputTokens: 0, imageOutputTokens: 0 };

// platform.claude.com/docs/en/build-with-claude/prompt-caching: a usage block with writes split by lifetime.
const ANTHROPIC_CACHE_USAGE = {
  input_tokens: 50,
  cache_read_input_tokens: 10_000,
  cache_creation_input_tokens: 2_000,
  cache_creation: { ephemeral_5m_input_tokens: 500, ephemeral_1h_input_tokens: 1_500 },
  output_tokens: 300,
};
// claude-3-opus in the catalog (models.dev): $15 input, $75 output, $1.50 cache read, $18.75 5-minute write;
// Anthropic bills a 1-hour write at 2x the base input ($30).
const OPUS3_COST = (50 * 15 + 10_000 * 1.5 + 500 * 18.75 + 1_500 * 30 + 300 * 75) / M;

describe('Anthropic: input_tokens excludes cache reads and writes; writes split 5-minute / 1-hour', () => {
  it('documented cache usage (non-streamed): every part stored, cost at the catalog rates', async () => {
    replyJson({
      id: 'msg_1',
      type: 'message',
      role: 'assistant',
      model: 'claude-3-opus-20240229',
      content: [{ type: 'text', text: 'Cached.' }],
      stop_reason: 'end_turn',
      stop_sequence: null,
      usage: ANTHROPIC_CACHE_USAGE,
    });
    const { trace } = await call('/v1/messages', { model: 'anthropic/claude-3-opus', max_tokens: 100, messages: [{ role: 'user', content: 'Hi' }] });
    const row = await rowOf(trace);
    expect(row).toMatchObject({ tokensIn: 12_050, tokensOut: 300, cacheReadTokens: 10_000, cacheWriteTokens: 2_000, ...ZERO_PARTS, cacheWrite1hTokens: 1_500 });
    expect(row.costSource).toBe('computed');
    expect(row.priceVersion).toBe(catalogVersion);
    expect(row.costUsd).toBeCloseTo(OPUS3_COST, 12);
  });

  it('the same usage streamed (message_start carries the cache counts, message_delta the output)', async () => {
    const { output_tokens: _out, ...startUsage } = ANTHROPIC_CACHE_USAGE;
    replySse([
      { type: 'message_start', message: { id: 'msg_2', type: 'message', role: 'assistant', model: 'claude-3-opus-20240229', content: [], stop_reason: null, stop_sequence: null, usage: { ...startUsage, output_tokens: 1 } } },
      { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } },
      { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'Cached.' } },
      { type: 'content_block_stop', index: 0 },
      { type: 'message_delta', delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: 300 } },
      { type: 'message_stop' },
    ]);
    const { trace } = await call('/v1/messages', { model: 'anthropic/claude-3-opus', max_tokens: 100, stream: true, messages: [{ role: 'user', content: 'Hi' }] });
    const row = await rowOf(trace);
    expect(row).toMatchObject({ streamed: true, tokensIn: 12_050, tokensOut: 300, cacheReadTokens: 10_000, cacheWriteTokens: 2_000, cacheWrite1hTokens: 1_500 });
    expect(row.costUsd).toBeCloseTo(OPUS3_COST, 12);
  });

  it('recorded test_opus_46_prompt stream: no cache, base rates', async () => {
    mock.handle(() => ({ type: 'replay', file: 'anthropic/llm-anthropic/test_opus_46_prompt.yaml' }));
    const { trace } = await call('/v1/messages', { model: 'anthropic/claude-opus-4-6', max_tokens: 100, stream: true, messages: [{ role: 'user', content: 'Hi' }] });
    const row = await rowOf(trace);
    expect(row).toMatchObject({ tokensIn: 17, tokensOut: 20, cacheReadTokens: 0, cacheWriteTokens: 0, ...ZERO_PARTS });
    // platform.claude.com pricing: Opus 4.6 $5 input, $25 output
    expect(row.costUsd).toBeCloseTo((17 * 5 + 20 * 25) / M, 12);
  });
});

describe('OpenAI Chat Completions: prompt and completion include cached, audio and image tokens', () => {
  it('recorded chat-audio-to-text and chat-text-to-audio: audio parts stored and priced at the audio rates', async () => {
    // openai.com pricing: gpt-4o-audio-preview text $2.50 / $10, audio $40 / $80; gpt-4o-mini-audio-preview
    // text $0.15 / $0.60, audio $10 / $20. The catalog has neither model: the user's prices.
    expect((await router.manage('PUT', '/api/pricing/openai/gpt-4o-audio-preview', { input: 2.5, output: 10, audioInput: 40, audioOutput: 80 })).status).toBe(200);
    expect((await router.manage('PUT', '/api/pricing/openai/gpt-4o-mini-audio-preview', { input: 0.15, output: 0.6, audioInput: 10, audioOutput: 20 })).status).toBe(200);

    mock.handle(() => ({ type: 'replay', file: 'openai/chat-audio-to-text.yaml' }));
    const a = await rowOf((await call('/v1/chat/completions', { model: 'openai/gpt-4o-audio-preview', messages: [{ role: 'user', content: 'Transcribe' }] })).trace);
    expect(a).toMatchObject({ tokensIn: 28, tokensOut: 17, ...ZERO_PARTS, audioInputTokens: 1, priceVersion: 'override' });
    expect(a.costUsd).toBeCloseTo((27 * 2.5 + 1 * 40 + 17 * 10) / M, 12);

    mock.handle(() => ({ type: 'replay', file: 'openai/chat-text-to-audio.yaml' }));
    const b = await rowOf((await call('/v1/chat/completions', { model: 'openai/gpt-4o-mini-audio-preview', messages: [{ role: 'user', content: 'Say hi' }] })).trace);
    expect(b).toMatchObject({ tokensIn: 22, tokensOut: 18, ...ZERO_PARTS, audioOutputTokens: 12 });
    expect(b.costUsd).toBeCloseTo((22 * 0.15 + 6 * 0.6 + 12 * 20) / M, 12);
  });

  it("documented prompt caching example: cached_tokens at the catalog's cache-read rate", async () => {
    // platform.openai.com/docs/guides/prompt-caching (usage of a cached request, reasoning added); o1-mini is
    // priced by the catalog alone: $1.10 input, $0.55 cached, $4.40 output (reasoning billed as output).
    replyJson({
      id: 'chatcmpl-1',
      object: 'chat.completion',
      created: 1,
      model: 'o1-mini-2024-09-12',
      choices: [{ index: 0, message: { role: 'assistant', content: 'Hi' }, finish_reason: 'stop' }],
      usage: { prompt_tokens: 2006, completion_tokens: 300, total_tokens: 2306, prompt_tokens_details: { cached_tokens: 1920, audio_tokens: 0 }, completion_tokens_details: { reasoning_tokens: 128, audio_tokens: 0 } },
    });
    const row = await rowOf((await call('/v1/chat/completions', { model: 'openai/o1-mini', messages: [{ role: 'user', content: 'Hi' }] })).trace);
    expect(row).toMatchObject({ tokensIn: 2006, tokensOut: 300, cacheReadTokens: 1920, reasoningTokens: 128, ...ZERO_PARTS, priceVersion: catalogVersion });
    expect(row.costUsd).toBeCloseTo(((2006 - 1920) * 1.1 + 1920 * 0.55 + 300 * 4.4) / M, 12);
  });
});

describe('OpenAI Responses: input_tokens includes cached, output_tokens includes reasoning', () => {
  it('documented usage object (platform.openai.com/docs/api-reference/responses/object)', async () => {
    replyJson({
      id: 'resp_1',
      object: 'response',
      created_at: 1,
      status: 'completed',
      model: 'o1-mini-2024-09-12',
      output: [{ type: 'message', id: 'msg_1', status: 'completed', role: 'assistant', content: [{ type: 'output_text', text: 'Hi', annotations: [] }] }],
      usage: { input_tokens: 1_200, input_tokens_details: { cached_tokens: 1_024 }, output_tokens: 500, output_tokens_details: { reasoning_tokens: 448 }, total_tokens: 1_700 },
    });
    const row = await rowOf((await call('/v1/responses', { model: 'openai/o1-mini', input: 'Hi' })).trace);
    expect(row).toMatchObject({ tokensIn: 1_200, tokensOut: 500, cacheReadTokens: 1_024, reasoningTokens: 448, ...ZERO_PARTS, priceVersion: catalogVersion });
    expect(row.costUsd).toBeCloseTo(((1_200 - 1_024) * 1.1 + 1_024 * 0.55 + 500 * 4.4) / M, 12);
  });
});

describe('Gemini: promptTokenCount includes cached content; thoughts are outside candidatesTokenCount', () => {
  it('documented usageMetadata with audio and image parts (ai.google.dev/api/generate-content#UsageMetadata)', async () => {
    replyJson({
      candidates: [{ content: { role: 'model', parts: [{ text: 'Heard it.' }] }, finishReason: 'STOP', index: 0 }],
      modelVersion: 'gemini-1.5-pro',
      usageMetadata: {
        promptTokenCount: 1_500,
        cachedContentTokenCount: 600,
        candidatesTokenCount: 50,
        thoughtsTokenCount: 100,
        totalTokenCount: 1_650,
        promptTokensDetails: [
          { modality: 'TEXT', tokenCount: 1_000 },
          { modality: 'AUDIO', tokenCount: 200 },
          { modality: 'IMAGE', tokenCount: 300 },
        ],
        candidatesTokensDetails: [{ modality: 'TEXT', tokenCount: 50 }],
      },
    });
    const row = await rowOf((await call('/v1beta/models/gemini/gemini-1.5-pro:generateContent', { contents: [{ role: 'user', parts: [{ text: 'Listen' }] }] })).trace);
    expect(row).toMatchObject({ tokensIn: 1_500, tokensOut: 150, cacheReadTokens: 600, reasoningTokens: 100, ...ZERO_PARTS, audioInputTokens: 200, imageInputTokens: 300, priceVersion: catalogVersion });
    // Catalog gemini-1.5-pro: $1.25 input (no separate audio or image rate: input), $0.3125 cached, $5 output
    // (thoughts billed as output).
    expect(row.costUsd).toBeCloseTo(((1_500 - 600 - 200 - 300) * 1.25 + 600 * 0.3125 + 200 * 1.25 + 300 * 1.25 + 50 * 5 + 100 * 5) / M, 12);
  });
});

describe('analytics totals carry the parts', () => {
  it('summary and breakdown sum the 1-hour writes, audio and image tokens of the rows', async () => {
    const summary = (await router.manage('GET', '/api/usage/summary')).json;
    expect(summary.tokens).toMatchObject({ cacheWrite1h: 3_000, audioInput: 201, audioOutput: 12, imageInput: 300, imageOutput: 0 });
    const byProvider = (await router.manage('GET', '/api/usage/breakdown?by=provider')).json.rows as any[];
    expect(byProvider.find((r) => r.key === 'anthropic').tokens).toMatchObject({ cacheWrite: 4_000, cacheWrite1h: 3_000 });
    expect(byProvider.find((r) => r.key === 'gemini').tokens).toMatchObject({ audioInput: 200, imageInput: 300 });
  });
});
