import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { ClientCodec, UpstreamCodec } from '../../src/daemon/translate/codec.js';
import type { WireFormat } from '../../src/daemon/translate/ir.js';
import { getClientCodec, getUpstreamCodec } from '../../src/daemon/translate/registry.js';
import { deterministicOptions, FIXTURES, readJson, runStream } from './golden-support.js';

/**
 * The official SDKs' own parsers must accept what the encoders produce. Each test translates a golden case
 * (client request -> IR -> upstream reply -> client reply, live, not from the expected files) and serves the
 * result through a `fetch` stub to the real `openai` / `@anthropic-ai/sdk` clients, without any network.
 */

type Upstream = Exclude<WireFormat, 'openai-completions'>;

function translate(caseName: string, clientFormat: WireFormat, upstreamFormat: Upstream, stream: boolean): string {
  const client: ClientCodec = getClientCodec(clientFormat);
  const upstream: UpstreamCodec = getUpstreamCodec(upstreamFormat);
  const request = client.decodeRequest(readJson(join(FIXTURES, caseName, `request.${clientFormat}.json`)));
  if (!stream) {
    const reply = upstream.decodeResponse(readJson(join(FIXTURES, caseName, `upstream-response.${upstreamFormat}.json`)));
    return JSON.stringify(client.encodeResponse(reply, request, deterministicOptions()));
  }
  const raw = readFileSync(join(FIXTURES, caseName, `upstream-stream.${upstreamFormat}.sse`), 'utf8');
  return runStream([raw], upstream, client, request, deterministicOptions()).text;
}

/** A fetch that answers every call with the given body. */
function serve(body: string, stream: boolean): typeof fetch {
  const type = stream ? 'text/event-stream' : 'application/json';
  return async () => new Response(body, { status: 200, headers: { 'content-type': type } });
}

function openai(body: string, stream: boolean): OpenAI {
  return new OpenAI({ apiKey: 'x', baseURL: 'http://router.invalid/v1', fetch: serve(body, stream), maxRetries: 0 });
}

function anthropic(body: string, stream: boolean): Anthropic {
  return new Anthropic({ apiKey: 'x', baseURL: 'http://router.invalid', fetch: serve(body, stream), maxRetries: 0 });
}

const chatParams = { model: 'm', messages: [{ role: 'user' as const, content: 'hi' }] };
const messageParams = { model: 'm', max_tokens: 1024, messages: [{ role: 'user' as const, content: 'hi' }] };

describe('openai SDK accepts the Chat Completions encoders', () => {
  it('streams text (chat.completions.create with stream: true)', async () => {
    const stream = await openai(translate('system-prompt-stream', 'openai-chat', 'anthropic', true), true).chat.completions.create({ ...chatParams, stream: true });
    let text = '';
    let usage: OpenAI.CompletionUsage | undefined | null;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta.content ?? '';
      if (chunk.usage) usage = chunk.usage;
    }
    expect(text).toBe('Bonjour Zoë ! 👋 Ravie de te rencontrer.');
    expect(usage?.total_tokens).toBe(36);
  });

  it('accumulates interleaved parallel tool calls (chat.completions.stream)', async () => {
    const client = openai(translate('parallel-tools-stream', 'openai-chat', 'openai-chat', true), true);
    const final = await client.chat.completions.stream({ ...chatParams, stream: true }).finalChatCompletion();
    const message = final.choices[0]!.message;
    expect(message.content).toBe("I'll help you generate two names for a pet pelican using the pelican name generator tool.");
    expect(message.tool_calls?.map((c) => (c.type === 'function' ? [c.id, c.function.arguments] : []))).toEqual([
      ['toolu_017ngBid8gmdReTeroVSZf7r', '{}'],
      ['toolu_01FJrHJrmnfEqR6NxkQ3yhpu', '{}'],
    ]);
    expect(final.choices[0]!.finish_reason).toBe('tool_calls');
  });

  it('accumulates text and a tool call sent in one upstream chunk', async () => {
    const client = openai(translate('text-and-tool-same-chunk-stream', 'openai-chat', 'openai-chat', true), true);
    const final = await client.chat.completions.stream({ ...chatParams, stream: true }).finalChatCompletion();
    const call = final.choices[0]!.message.tool_calls?.[0];
    expect(final.choices[0]!.message.content).toBe('Let me look that up.');
    expect(call?.type === 'function' && JSON.parse(call.function.arguments)).toEqual({ q: 'cafés near me' });
  });

  it('keeps reasoning_content and thinking_blocks of a thinking reply from Anthropic', async () => {
    const stream = await openai(translate('thinking-stream', 'openai-chat', 'anthropic', true), true).chat.completions.create({ ...chatParams, stream: true });
    let reasoning = '';
    const blocks: unknown[] = [];
    for await (const chunk of stream) {
      const delta = chunk.choices[0]?.delta as { reasoning_content?: string; thinking_blocks?: unknown[] } | undefined;
      reasoning += delta?.reasoning_content ?? '';
      blocks.push(...(delta?.thinking_blocks ?? []));
    }
    expect(reasoning).toMatch(/^This is a straightforward question about pedestrian safety\./);
    expect(blocks).toEqual([expect.objectContaining({ type: 'thinking', thinking: reasoning, signature: expect.stringMatching(/^EvMC/) })]);
  });

  it('parses a non-streaming tool call reply', async () => {
    const completion = await openai(translate('tool-call', 'openai-chat', 'anthropic', false), false).chat.completions.create(chatParams);
    const call = completion.choices[0]!.message.tool_calls?.[0];
    expect(call?.type === 'function' && call.function.name).toBe('get_current_weather');
    expect(completion.usage?.prompt_tokens).toBe(162);
  });

  it('raises a mid-stream upstream error as an APIError', async () => {
    const stream = await openai(translate('upstream-error-stream', 'openai-chat', 'anthropic', true), true).chat.completions.create({ ...chatParams, stream: true });
    const read = async () => {
      for await (const _ of stream) void _;
    };
    await expect(read()).rejects.toThrow(/Overloaded/);
  });
});

describe('openai SDK accepts the legacy Completions encoders', () => {
  it('streams text_completion chunks with a usage chunk', async () => {
    const stream = await openai(translate('text-stream', 'openai-completions', 'anthropic', true), true).completions.create({ model: 'm', prompt: 'hi', stream: true });
    let text = '';
    let finish: string | null | undefined;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.text ?? '';
      finish ??= chunk.choices[0]?.finish_reason;
    }
    expect(text).toBe('Hi there! How can I help today? I can answer questions, explain concepts, help with writing or brainstorming, code, plan something, and more. Tell me what you’d like to work on or a topic you’re curious about.');
    expect(finish).toBe('stop');
  });

  it('parses a non-streaming text_completion', async () => {
    const completion = await openai(translate('max-tokens', 'openai-completions', 'openai-chat', false), false).completions.create({ model: 'm', prompt: 'hi' });
    expect(completion.choices[0]).toMatchObject({ text: 'The Eiffel Tower’s story begins in 1887, when construction', finish_reason: 'length' });
  });
});

describe('Anthropic SDK accepts the Messages encoders', () => {
  it('accumulates a streamed text reply translated from Chat Completions (messages.stream().finalMessage())', async () => {
    const message = await anthropic(translate('system-prompt-stream', 'anthropic', 'openai-chat', true), true).messages.stream(messageParams).finalMessage();
    expect(message.content).toEqual([{ type: 'text', text: 'Bonjour Zoë ! 👋 Ravie de te rencontrer.' }]);
    expect(message.stop_reason).toBe('end_turn');
    expect(message.usage).toMatchObject({ input_tokens: 24, output_tokens: 12 });
  });

  it('accumulates interleaved OpenAI parallel tool calls as sequential tool_use blocks', async () => {
    const message = await anthropic(translate('parallel-tools-stream', 'anthropic', 'openai-chat', true), true).messages.stream(messageParams).finalMessage();
    expect(message.content.map((b) => b.type)).toEqual(['text', 'tool_use', 'tool_use']);
    expect(message.content.slice(1).map((b) => (b.type === 'tool_use' ? [b.id, b.input] : []))).toEqual([
      ['toolu_017ngBid8gmdReTeroVSZf7r', {}],
      ['toolu_01FJrHJrmnfEqR6NxkQ3yhpu', {}],
    ]);
    expect(message.stop_reason).toBe('tool_use');
  });

  it('accumulates thinking with its signature, and redacted thinking', async () => {
    const thinking = await anthropic(translate('thinking-stream', 'anthropic', 'anthropic', true), true).messages.stream(messageParams).finalMessage();
    expect(thinking.content.map((b) => b.type)).toEqual(['thinking', 'text']);
    expect(thinking.content[0]).toMatchObject({ type: 'thinking', signature: expect.stringMatching(/^EvMC/) });
    const redacted = await anthropic(translate('redacted-thinking-stream', 'anthropic', 'openai-chat', true), true).messages.stream(messageParams).finalMessage();
    expect(redacted.content.map((b) => b.type)).toEqual(['redacted_thinking', 'redacted_thinking', 'text']);
  });

  it('reports cache and thinking usage from an OpenAI upstream in message_delta', async () => {
    const message = await anthropic(translate('usage-cache-stream', 'anthropic', 'openai-chat', true), true).messages.stream(messageParams).finalMessage();
    expect(message.usage).toMatchObject({ input_tokens: 209, cache_read_input_tokens: 1800, output_tokens: 393, output_tokens_details: { thinking_tokens: 256 } });
  });

  it('streams input_json_delta fragments that parse into the tool input', async () => {
    const message = await anthropic(translate('tool-call-stream', 'anthropic', 'openai-chat', true), true).messages.stream(messageParams).finalMessage();
    expect(message.content[1]).toMatchObject({ type: 'tool_use', name: 'get_weather', input: { city: 'Zürich' } });
  });

  it('parses a non-streaming message with parallel tool calls', async () => {
    const message = await anthropic(translate('parallel-tools', 'anthropic', 'openai-chat', false), false).messages.create(messageParams);
    expect(message.content.filter((b) => b.type === 'tool_use')).toHaveLength(4);
    expect(message.stop_reason).toBe('tool_use');
  });

  it('raises an error event, including the one for an empty upstream stream', async () => {
    const failing = anthropic(translate('upstream-error-stream', 'anthropic', 'anthropic', true), true);
    await expect(failing.messages.stream(messageParams).finalMessage()).rejects.toThrow(/Overloaded/);
    const empty = anthropic(translate('empty-stream', 'anthropic', 'openai-chat', true), true);
    await expect(empty.messages.stream(messageParams).finalMessage()).rejects.toThrow(/upstream stream was empty/);
  });
});
