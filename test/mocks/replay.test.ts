import Anthropic from '@anthropic-ai/sdk';
import { createParser, type EventSourceMessage } from 'eventsource-parser';
import { request } from 'node:http';
import OpenAI from 'openai';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { loadRecording } from './recordings.js';
import { startMockUpstream, type MockUpstream } from './upstream.js';

let mock: MockUpstream;
let openai: OpenAI;
let anthropic: Anthropic;

beforeAll(async () => {
  mock = await startMockUpstream();
  openai = new OpenAI({ apiKey: 'sk-test', baseURL: mock.openaiBase, maxRetries: 0 });
  anthropic = new Anthropic({ apiKey: 'sk-ant', baseURL: mock.url, maxRetries: 0 });
});
afterEach(() => mock.reset());
afterAll(() => mock.close());

/** The recorded SSE events of a cassette, parsed independently of the mock. */
function recordedEvents(file: string, interaction = 0): EventSourceMessage[] {
  const out: EventSourceMessage[] = [];
  const parser = createParser({ onEvent: (e) => out.push(e) });
  parser.feed(loadRecording(file)[interaction]!.response.body);
  return out;
}

function recordedJson(file: string, interaction = 0): any[] {
  return recordedEvents(file, interaction)
    .filter((e) => e.data !== '[DONE]')
    .map((e) => JSON.parse(e.data));
}

const messages = [{ role: 'user' as const, content: 'Hi' }];
const claude = { model: 'claude-haiku-4-5', max_tokens: 1024, messages };

describe('replaying OpenAI cassettes through the openai SDK', () => {
  it('streams chat-streaming in 7-byte writes, multi-byte characters intact', async () => {
    const file = 'openai/chat-streaming.yaml';
    const expected = recordedJson(file)
      .map((c) => c.choices[0]?.delta?.content ?? '')
      .join('');
    expect(expected).toContain('’');
    mock.enqueue({ type: 'replay', file, chunkBytes: 7 });
    const stream = await openai.chat.completions.create({ model: 'gpt-5-nano', messages, stream: true });
    let text = '';
    let count = 0;
    for await (const c of stream) {
      text += c.choices[0]?.delta.content ?? '';
      count++;
    }
    expect(text).toBe(expected);
    expect(count).toBe(recordedJson(file).length);
  });

  it('really delivers the 7-byte pieces separately, cutting UTF-8 sequences', async () => {
    mock.enqueue({ type: 'replay', file: 'openai/chat-streaming.yaml', chunkBytes: 7 });
    const pieces = await new Promise<Buffer[]>((resolve, reject) => {
      const req = request(`${mock.openaiBase}/chat/completions`, { method: 'POST' }, (res) => {
        const got: Buffer[] = [];
        res.on('data', (b: Buffer) => got.push(b));
        res.on('end', () => resolve(got));
      });
      req.on('error', reject);
      req.end('{"stream":true}');
    });
    const whole = Buffer.concat(pieces).toString('utf8');
    expect(whole).toBe(loadRecording('openai/chat-streaming.yaml')[0]!.response.body);
    expect(pieces.length).toBeGreaterThan(whole.length / 70);
    // At least one piece ends inside a multi-byte character, so a client must decode across reads.
    expect(pieces.some((p) => p.toString('utf8').endsWith('\ufffd'))).toBe(true);
  });

  it('streams the include_usage cassette event by event, ending with a usage-only chunk', async () => {
    mock.enqueue({ type: 'replay', file: 'openai/chat-streaming-detailed-usage.yaml' });
    const final = await openai.chat.completions
      .stream({ model: 'gpt-5-nano', messages, stream_options: { include_usage: true } })
      .finalChatCompletion();
    expect(final.choices[0]!.finish_reason).toBe('length');
    expect(final.usage).toMatchObject({ prompt_tokens: 12, completion_tokens: 100, total_tokens: 112 });
  });

  it('replays a legacy completion stream and a base64 embedding', async () => {
    mock.enqueue({ type: 'replay', file: 'openai/completion-streaming-usage.yaml', chunkBytes: 64 });
    const chunks = [];
    for await (const c of await openai.completions.create({ model: 'babbage-002', prompt: 'x', stream: true })) chunks.push(c);
    expect(chunks.at(-1)!.usage).toEqual({ prompt_tokens: 31, completion_tokens: 25, total_tokens: 56 });

    mock.enqueue({ type: 'replay', file: 'openai/embeddings-base64.yaml' });
    const emb = await openai.embeddings.create({ model: 'text-embedding-3-small', input: 'x' });
    expect(emb.data[0]!.embedding).toHaveLength(1536);
    expect(emb.usage.prompt_tokens).toBe(7);
  });

  it('replays a recorded 404 as NotFoundError with the recorded code', async () => {
    mock.enqueue({ type: 'replay', file: 'openai/chat-unknown-model.yaml' });
    const err = await openai.chat.completions.create({ model: 'gpt-4.1-nano-wrong', messages }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.NotFoundError);
    expect(err).toMatchObject({ status: 404, code: 'model_not_found' });
  });
});

describe('replaying Anthropic cassettes through @anthropic-ai/sdk', () => {
  it('streams thinking, signature and text in 7-byte writes to an identical final message', async () => {
    const file = 'anthropic/pydantic-ai/test_anthropic_model_thinking_part_stream.yaml';
    const deltas = recordedJson(file).filter((e) => e.type === 'content_block_delta');
    const thinking = deltas.map((e) => e.delta.thinking ?? '').join('');
    const text = deltas.map((e) => e.delta.text ?? '').join('');
    const signature = deltas.find((e) => e.delta.type === 'signature_delta').delta.signature;
    mock.enqueue({ type: 'replay', file, chunkBytes: 7 });
    const final = await anthropic.messages.stream(claude).finalMessage();
    expect(final.content[0]).toEqual({ type: 'thinking', thinking, signature });
    expect(final.content[1]).toMatchObject({ type: 'text', text });
    expect(final.stop_reason).toBe('end_turn');
  });

  it('streams two parallel tool_use blocks from input_json_delta fragments', async () => {
    mock.enqueue({ type: 'replay', file: 'anthropic/llm-anthropic/test_tools@e76ad37.yaml', chunkBytes: 7 });
    const final = await anthropic.messages.stream(claude).finalMessage();
    const uses = final.content.filter((b) => b.type === 'tool_use');
    expect(uses).toHaveLength(2);
    expect(uses.every((u) => u.name === 'pelican_name_generator')).toBe(true);
    expect(final.stop_reason).toBe('tool_use');
  });

  it('replays a stream whose JSON is padded with whitespace and keeps its request-id', async () => {
    mock.enqueue({ type: 'replay', file: 'anthropic/llm-anthropic/test_prompt.yaml' });
    const stream = anthropic.messages.stream(claude);
    const final = await stream.finalMessage();
    const expected = recordedJson('anthropic/llm-anthropic/test_prompt.yaml')
      .filter((e) => e.type === 'content_block_delta')
      .map((e) => e.delta.text)
      .join('');
    expect(final.content).toMatchObject([{ type: 'text', text: expected }]);
    expect(stream.request_id).toBe(loadRecording('anthropic/llm-anthropic/test_prompt.yaml')[0]!.response.headers['request-id']);
  });

  it('replays a parsed_body JSON reply with four parallel tool calls', async () => {
    mock.enqueue({ type: 'replay', file: 'anthropic/pydantic-ai/test_multiple_parallel_tool_calls.yaml' });
    const msg = await anthropic.messages.create(claude);
    expect(msg.content.map((b) => b.type)).toEqual(['text', 'tool_use', 'tool_use', 'tool_use', 'tool_use']);
  });

  it('composes with drop-mid-stream: the recorded stream is cut after N events', async () => {
    mock.enqueue({
      type: 'drop-mid-stream',
      afterChunks: 4,
      then: { type: 'replay', file: 'anthropic/llm-anthropic/test_prompt.yaml' },
    });
    const stream = anthropic.messages.stream(claude);
    const events: string[] = [];
    stream.on('streamEvent', (e) => events.push(e.type));
    await expect(stream.finalMessage()).rejects.toThrow();
    // message_start, content_block_start, (ping is skipped by the SDK), content_block_delta
    expect(events).toEqual(['message_start', 'content_block_start', 'content_block_delta']);
  });
});
