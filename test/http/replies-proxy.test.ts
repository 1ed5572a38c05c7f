/**
 * Real replies of the proxy routes parse with the reply schema their route declares
 * (test/support/reply-contract.ts), on a real daemon whose upstreams are the mock: recorded OpenAI and
 * Anthropic replies (test/fixtures/recorded, from /work/shared/fixtures) replayed through the same format
 * and translated into the others, the mock's own replies for the families it has no recording of, the
 * streamed replies' content type, the model catalogs, and each route's error body in its client format.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Behavior } from '../mocks/types.js';
import { type MockUpstream, startMockUpstream } from '../mocks/upstream.js';
import { type CheckOptions, checkError, checkReply, exercised } from '../support/reply-contract.js';
import { type RouterProcess, startRouter } from '../support/router-daemon.js';
import { ROUTES } from '../../src/daemon/routes.js';

let router: RouterProcess;
let mock: MockUpstream;
let asKey: CheckOptions;
let key: string;

beforeAll(async () => {
  mock = await startMockUpstream();
  router = await startRouter();
  for (const [provider, baseUrl] of [
    ['openai', mock.openaiBase],
    ['anthropic', mock.anthropicBase],
    ['gemini', mock.geminiBase],
    ['cohere', mock.cohereBase],
  ] as const) {
    await router.addConnection({ provider, apiKey: `${provider}-up-0123456789`, providerSpecificData: { baseUrl } });
  }
  key = (await checkReply(router, 'POST', '/api/keys', { name: 'proxy', scopes: ['proxy'] }, { status: 201 })).key;
  asKey = { anonymous: true, headers: { authorization: `Bearer ${key}` } };
}, 60_000);
beforeEach(() => mock.reset());
afterAll(async () => {
  await router?.stop();
  await mock?.close();
});

const check = (path: string, body: unknown, opts: CheckOptions = asKey) => checkReply(router, 'POST', path, body, opts);
const replay = (file: string): Behavior => ({ type: 'replay', file });
const chat = (model: string, extra: Record<string, unknown> = {}) => ({ model, max_tokens: 64, messages: [{ role: 'user', content: 'Say hi.' }], ...extra });

describe('chat-like replies parse with their route schema', () => {
  it('Chat Completions: recorded OpenAI replies passed through, an Anthropic one translated, a stream', async () => {
    for (const file of ['chat-basic', 'chat-tools', 'chat-detailed-usage', 'chat-web-search', 'chat-json-mode']) {
      mock.enqueue(replay(`openai/${file}.yaml`));
      await check('/v1/chat/completions', chat('openai/gpt-4o-mini'));
    }
    mock.enqueue(replay('anthropic/pydantic-ai/test_anthropic_tool_with_thinking.yaml'));
    const translated = await check('/v1/chat/completions', chat('anthropic/claude-sonnet-4-5'));
    expect(translated.object).toBe('chat.completion');
    mock.enqueue(replay('openai/chat-streaming.yaml'));
    expect(await check('/v1/chat/completions', chat('openai/gpt-4o-mini', { stream: true }))).toContain('data: [DONE]');
    mock.enqueue(replay('anthropic/llm-anthropic/test_prompt.yaml'));
    expect(await check('/v1/chat/completions', chat('anthropic/claude-sonnet-4-5', { stream: true }))).toContain('data: [DONE]');
    mock.enqueue(replay('openai/chat-basic.yaml'));
    await check('/api/v1/relay/chat/completions', chat('openai/gpt-4o-mini'));
  });

  it('Messages: recorded Anthropic replies passed through, an OpenAI one translated, a stream', async () => {
    const anthropic = { anonymous: true, headers: { 'x-api-key': key, 'anthropic-version': '2023-06-01' } };
    // pydantic-ai recorded plain replies, llm-anthropic streamed ones.
    for (const file of ['test_multiple_parallel_tool_calls', 'test_anthropic_model_instructions', 'test_anthropic_tool_with_thinking']) {
      mock.enqueue(replay(`anthropic/pydantic-ai/${file}.yaml`));
      await check('/v1/messages', chat('anthropic/claude-sonnet-4-5'), anthropic);
    }
    for (const file of ['test_thinking_prompt', 'test_web_search']) {
      mock.enqueue(replay(`anthropic/llm-anthropic/${file}.yaml`));
      expect(await check('/v1/messages', chat('anthropic/claude-sonnet-4-5', { stream: true }), anthropic)).toContain('event: message_stop');
    }
    mock.enqueue(replay('openai/chat-tools.yaml'));
    expect((await check('/v1/messages', chat('openai/gpt-4o-mini'), anthropic)).type).toBe('message');
    await check('/v1/messages/count_tokens', { model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'Count me.' }] }, anthropic);
    await check('/v1/messages/count_tokens', { model: 'anthropic/claude-sonnet-4-5', messages: [{ role: 'user', content: 'Count me.' }] }, anthropic);
  });

  it('Responses, legacy completions, Gemini generateContent and countTokens', async () => {
    await check('/v1/responses', { model: 'openai/gpt-4o-mini', input: 'Say hi.' });
    mock.enqueue(replay('anthropic/pydantic-ai/test_anthropic_model_instructions.yaml'));
    expect((await check('/v1/responses', { model: 'anthropic/claude-sonnet-4-5', input: 'Say hi.' })).object).toBe('response');
    expect(await check('/v1/responses', { model: 'openai/gpt-4o-mini', input: 'Say hi.', stream: true })).toContain('response.completed');
    mock.enqueue(replay('openai/completion-basic.yaml'));
    await check('/v1/completions', { model: 'openai/gpt-3.5-turbo-instruct', prompt: 'Say hi.' });
    mock.enqueue(replay('openai/completion-streaming.yaml'));
    expect(await check('/v1/completions', { model: 'openai/gpt-3.5-turbo-instruct', prompt: 'Say hi.', stream: true })).toContain('data: [DONE]');
    const gemini = { anonymous: true, headers: { 'x-goog-api-key': key } };
    const contents = { contents: [{ role: 'user', parts: [{ text: 'Say hi.' }] }] };
    await check('/v1beta/models/gemini/gemini-2.5-flash:generateContent', contents, gemini);
    mock.enqueue(replay('openai/chat-basic.yaml'));
    expect((await check('/v1beta/models/openai/gpt-4o-mini:generateContent', contents, gemini)).candidates).toHaveLength(1);
    expect(await check('/v1beta/models/gemini/gemini-2.5-flash:streamGenerateContent?alt=sse', contents, gemini)).toContain('data: ');
    await check('/v1beta/models/openai/gpt-4o-mini:countTokens', contents, gemini);
    await check('/v1beta/openai/gpt-4o-mini:generateContent', contents, gemini);
  });

  it('model catalogs in each shape', async () => {
    await checkReply(router, 'POST', '/api/combos', { name: 'contract-combo', models: ['openai/gpt-4o-mini'] }, { status: 201 });
    await checkReply(router, 'GET', '/v1/models', undefined, asKey);
    await checkReply(router, 'GET', '/v1/models', undefined, { anonymous: true, headers: { 'x-api-key': key, 'anthropic-version': '2023-06-01' } });
    await checkReply(router, 'GET', '/v1beta/models', undefined, { anonymous: true, headers: { 'x-goog-api-key': key } });
  });
});

describe('endpoint family replies parse with their route schema', () => {
  it('embeddings (recorded, floats and base64), images, moderation, rerank v1 and v2', async () => {
    for (const file of ['embeddings-basic', 'embeddings-base64']) {
      mock.enqueue(replay(`openai/${file}.yaml`));
      await check('/v1/embeddings', { model: 'openai/text-embedding-3-small', input: 'hello' });
    }
    await check('/v1/images/generations', { model: 'openai/gpt-image-1', prompt: 'a fox', n: 2 });
    await check('/v1/images/generations', { model: 'openai/dall-e-3', prompt: 'a fox', response_format: 'url' });
    expect(await check('/v1/images/generations', { model: 'gemini/gemini-2.5-flash-image', prompt: 'a fox', stream: true })).toContain('image_generation.completed');
    const edit = new FormData();
    edit.set('model', 'openai/gpt-image-1');
    edit.set('prompt', 'add a hat');
    edit.set('image', new Blob([Buffer.from('89504e470d0a1a0a', 'hex')], { type: 'image/png' }), 'in.png');
    await check('/v1/images/edits', undefined, { ...asKey, raw: edit });
    await check('/v1/moderations', { model: 'openai/omni-moderation-latest', input: ['a nice day', 'I will kill the process'] });
    const rerank = { model: 'cohere/rerank-v3.5', query: 'capital of France', documents: ['Paris is the capital.', 'Berlin is big.'], top_n: 1 };
    await check('/v1/rerank', { ...rerank, return_documents: true });
    await check('/v2/rerank', rerank);
  });

  it('audio: speech as audio and as SSE, transcripts as JSON, text and events', async () => {
    await check('/v1/audio/speech', { model: 'openai/tts-1', voice: 'alloy', input: 'Hello there.' });
    expect(await check('/v1/audio/speech', { model: 'openai/gpt-4o-mini-tts', voice: 'coral', input: 'Hi!', stream_format: 'sse' })).toContain('speech.audio.done');
    const form = (model: string, fields: Record<string, string> = {}) => {
      const f = new FormData();
      f.set('model', model);
      for (const [k, v] of Object.entries(fields)) f.set(k, v);
      f.set('file', new Blob([Buffer.alloc(4000, 1)], { type: 'audio/mpeg' }), 'a.mp3');
      return f;
    };
    mock.enqueue(replay('openai/audio-transcription-basic.yaml'));
    await check('/v1/audio/transcriptions', undefined, { ...asKey, raw: form('openai/whisper-1') });
    await check('/v1/audio/transcriptions', undefined, { ...asKey, raw: form('openai/whisper-1', { response_format: 'verbose_json' }) });
    expect(await check('/v1/audio/transcriptions', undefined, { ...asKey, raw: form('openai/whisper-1', { response_format: 'srt' }) })).toContain('-->');
    expect(await check('/v1/audio/transcriptions', undefined, { ...asKey, raw: form('openai/gpt-4o-transcribe', { stream: 'true' }) })).toContain('transcript.text.done');
    mock.enqueue(replay('openai/audio-translation-basic.yaml'));
    await check('/v1/audio/translations', undefined, { ...asKey, raw: form('openai/whisper-1') });
  });
});

describe('error replies take the shape their route documents', () => {
  it('each client format', async () => {
    await checkError(router, 'POST', '/v1/chat/completions', { messages: [] }, 400, asKey);
    await checkError(router, 'POST', '/v1/messages', { model: 'nope/x', max_tokens: 5, messages: [{ role: 'user', content: 'x' }] }, 404, { anonymous: true, headers: { 'x-api-key': key } });
    await checkError(router, 'POST', '/v1/messages', chat('anthropic/claude-sonnet-4-5'), 401, { anonymous: true, headers: { 'x-api-key': 'sk-wrong' } });
    await checkError(router, 'POST', '/v1beta/models/gemini/gemini-2.5-flash:generateContent', [1], 400, { anonymous: true, headers: { 'x-goog-api-key': key } });
    mock.enqueue(replay('openai/chat-bad-request.yaml'));
    await checkError(router, 'POST', '/v1/chat/completions', chat('openai/gpt-4o-mini'), 400, asKey);
    await checkError(router, 'POST', '/v1/embeddings', { model: 'openai/text-embedding-3-small' }, 400, asKey);
  });

  it('every proxy route was exercised', () => {
    const proxy = ROUTES.filter((d) => d.tag === 'proxy' && !(d.method === 'GET' && d.path === '/v1/responses')).map((d) => `${d.method} ${d.path}`);
    expect(proxy.filter((id) => !exercised.has(id))).toEqual([]);
  });
});
