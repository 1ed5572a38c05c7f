import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { WireFormat } from '../../src/daemon/translate/ir.js';
import { getClientCodec, getUpstreamCodec } from '../../src/daemon/translate/registry.js';
import { deterministicOptions, FIXTURES, readJson, runStream } from './golden-support.js';

/**
 * Reference parity: for the replies recorded from the real APIs, what the official SDK makes of router's
 * same-format reply must equal what it makes of the provider's original bytes. This checks the encoders
 * against the providers themselves, not against expected files written by us.
 */

type Same = 'anthropic' | 'openai-chat';

function routerReply(caseName: string, format: Same, stream: boolean, client: WireFormat = format): string {
  const request = getClientCodec(client).decodeRequest(readJson(join(FIXTURES, caseName, `request.${client}.json`)));
  const upstream = getUpstreamCodec(format);
  if (!stream) {
    const reply = upstream.decodeResponse(readJson(join(FIXTURES, caseName, `upstream-response.${format}.json`)));
    return JSON.stringify(getClientCodec(client).encodeResponse(reply, request, deterministicOptions()));
  }
  return runStream([upstreamText(caseName, format, true)], upstream, getClientCodec(client), request, deterministicOptions()).text;
}

function upstreamText(caseName: string, format: Same, stream: boolean): string {
  return readFileSync(join(FIXTURES, caseName, stream ? `upstream-stream.${format}.sse` : `upstream-response.${format}.json`), 'utf8');
}

const serve = (body: string, stream: boolean): typeof fetch => async () =>
  new Response(body, { headers: { 'content-type': stream ? 'text/event-stream' : 'application/json' } });

async function anthropicView(body: string, stream: boolean): Promise<Anthropic.Message> {
  const client = new Anthropic({ apiKey: 'x', baseURL: 'http://router.invalid', fetch: serve(body, stream), maxRetries: 0 });
  const params = { model: 'm', max_tokens: 1024, messages: [{ role: 'user' as const, content: 'hi' }] };
  return stream ? client.messages.stream(params).finalMessage() : client.messages.create(params);
}

async function openaiView(body: string, stream: boolean): Promise<OpenAI.ChatCompletion> {
  const client = new OpenAI({ apiKey: 'x', baseURL: 'http://router.invalid/v1', fetch: serve(body, stream), maxRetries: 0 });
  const params = { model: 'm', messages: [{ role: 'user' as const, content: 'hi' }] };
  return stream ? client.chat.completions.stream({ ...params, stream: true }).finalChatCompletion() : client.chat.completions.create(params);
}

/** The parts of a Message router promises to keep (ids are router's own; usage extras are not carried). */
function anthropicEssentials(m: Anthropic.Message) {
  const { input_tokens, output_tokens, cache_creation_input_tokens, cache_read_input_tokens } = m.usage;
  return { model: m.model, content: m.content, stop_reason: m.stop_reason, stop_sequence: m.stop_sequence, usage: { input_tokens, output_tokens, cache_creation_input_tokens, cache_read_input_tokens } };
}

function openaiEssentials(c: OpenAI.ChatCompletion) {
  const choice = c.choices[0]!;
  const { content, tool_calls, refusal } = choice.message;
  const u = c.usage;
  const usage = u && { prompt_tokens: u.prompt_tokens, completion_tokens: u.completion_tokens, total_tokens: u.total_tokens, cached: u.prompt_tokens_details?.cached_tokens, reasoning: u.completion_tokens_details?.reasoning_tokens };
  return { model: c.model, content, tool_calls, refusal, finish_reason: choice.finish_reason, usage };
}

const ANTHROPIC_RECORDED: Array<[string, boolean]> = [
  ['system-prompt', false],
  ['parallel-tools', false],
  ['tool-results', false],
  ['thinking', false],
  ['thinking-stream', true],
  ['redacted-thinking-stream', true],
  ['parallel-tools-stream', true],
  ['tool-results-stream', true],
  ['stop-sequence-stream', true],
  ['json-schema-stream', true],
];

const OPENAI_RECORDED: Array<[string, boolean]> = [
  ['text', false],
  ['multi-turn', false],
  ['tool-call', false],
  ['json-object', false],
  ['max-tokens-stream', true],
];

describe('Anthropic -> router -> Anthropic client equals the recorded reply (as the Anthropic SDK reads both)', () => {
  it.each(ANTHROPIC_RECORDED)('%s', async (caseName, stream) => {
    const original = await anthropicView(upstreamText(caseName, 'anthropic', stream), stream);
    const viaRouter = await anthropicView(routerReply(caseName, 'anthropic', stream), stream);
    expect(anthropicEssentials(viaRouter)).toEqual(anthropicEssentials(original));
  });
});

describe('OpenAI -> router -> OpenAI client equals the recorded reply (as the openai SDK reads both)', () => {
  it.each(OPENAI_RECORDED)('%s', async (caseName, stream) => {
    const original = await openaiView(upstreamText(caseName, 'openai-chat', stream), stream);
    const viaRouter = await openaiView(routerReply(caseName, 'openai-chat', stream), stream);
    expect(openaiEssentials(viaRouter)).toEqual(openaiEssentials(original));
  });

  it('text-stream (recorded chat-streaming, which has no usage chunk)', async () => {
    const original = await openaiView(upstreamText('text-stream', 'openai-chat', true), true);
    const viaRouter = await openaiView(routerReply('text-stream', 'openai-chat', true), true);
    expect(openaiEssentials(viaRouter)).toEqual(openaiEssentials(original));
  });
});

describe('across formats the SDKs see the same conversation', () => {
  it('recorded Anthropic parallel tool calls reach an OpenAI client with the same ids and inputs', async () => {
    const original = await anthropicView(upstreamText('parallel-tools', 'anthropic', false), false);
    const viaRouter = await openaiView(routerReply('parallel-tools', 'anthropic', false, 'openai-chat'), false);
    const fromAnthropic = original.content.flatMap((b) => (b.type === 'tool_use' ? [[b.id, b.name, b.input]] : []));
    const fromOpenAi = (viaRouter.choices[0]!.message.tool_calls ?? []).flatMap((c) => (c.type === 'function' ? [[c.id, c.function.name, JSON.parse(c.function.arguments)]] : []));
    expect(fromOpenAi).toEqual(fromAnthropic);
    expect(viaRouter.choices[0]!.message.content).toBe(original.content[0]?.type === 'text' ? original.content[0].text : undefined);
  });

  it('a recorded OpenAI tool call reaches an Anthropic client as the same tool_use', async () => {
    const original = await openaiView(upstreamText('tool-call', 'openai-chat', false), false);
    const viaRouter = await anthropicView(routerReply('tool-call', 'openai-chat', false, 'anthropic'), false);
    const call = original.choices[0]!.message.tool_calls![0]!;
    expect(call.type).toBe('function');
    if (call.type !== 'function') return;
    expect(viaRouter.content).toEqual([{ type: 'tool_use', id: call.id, name: call.function.name, input: JSON.parse(call.function.arguments) }]);
    expect(viaRouter.stop_reason).toBe('tool_use');
  });
});
