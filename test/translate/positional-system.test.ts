import { describe, expect, it } from 'vitest';
import type { IrRequest } from '../../src/daemon/translate/ir.js';
import { getClientCodec, getUpstreamCodec } from '../../src/daemon/translate/registry.js';
import { mapRequestTexts } from '../../src/daemon/guardrails/texts.js';
import { cacheKey } from '../../src/daemon/cache/key.js';
import { fitRequest } from '../../src/daemon/compression/fit.js';

/**
 * Positional system messages: a system/developer message in the middle of a conversation keeps its place
 * from every client format that can say it, through the IR, to every upstream format, each in its own way.
 */

const PROMPT = 'You are terse.';
const REMINDER = 'The user is on macOS.';
const LATE = 'Stop after this tool.';
const ARGS = '{"path":"a.txt"}';

/** One conversation, as each client format that has a positional system role sends it. */
const requests: Record<string, { body: Record<string, unknown>; headers?: Headers; developerLate?: boolean }> = {
  'openai-chat': {
    body: {
      model: 'm',
      messages: [
        { role: 'system', content: PROMPT },
        { role: 'user', content: 'hi' },
        { role: 'system', content: REMINDER },
        { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'read', arguments: ARGS } }] },
        { role: 'tool', tool_call_id: 'c1', content: 'file' },
        { role: 'developer', content: LATE },
        { role: 'user', content: 'go' },
      ],
    },
    developerLate: true,
  },
  'openai-responses': {
    body: {
      model: 'm',
      instructions: PROMPT,
      input: [
        { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'hi' }] },
        { type: 'message', role: 'system', content: [{ type: 'input_text', text: REMINDER }] },
        { type: 'function_call', call_id: 'c1', name: 'read', arguments: ARGS },
        { type: 'function_call_output', call_id: 'c1', output: 'file' },
        { type: 'message', role: 'developer', content: [{ type: 'input_text', text: LATE }] },
        { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'go' }] },
      ],
    },
    developerLate: true,
  },
  anthropic: {
    // Claude Code 2.1's shape: system prompt on top, `role: "system"` turns inside `messages` with the beta.
    body: {
      model: 'm',
      max_tokens: 100,
      system: PROMPT,
      messages: [
        { role: 'user', content: 'hi' },
        { role: 'system', content: REMINDER },
        { role: 'assistant', content: [{ type: 'tool_use', id: 'c1', name: 'read', input: { path: 'a.txt' } }] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'c1', content: 'file' }] },
        { role: 'system', content: [{ type: 'text', text: LATE }] },
        { role: 'user', content: 'go' },
      ],
    },
    headers: new Headers({ 'anthropic-beta': 'claude-code-20250219, mid-conversation-system-2026-04-07' }),
  },
};

const note = (text: string) => `<system-note>\n${text}\n</system-note>`;

/** What each upstream must receive, given whether the late message was a developer one and the beta was asked. */
function expected(upstream: string, developer: boolean, beta: boolean): Record<string, unknown> {
  const lateRole = developer ? 'developer' : 'system';
  switch (upstream) {
    case 'openai-chat':
      return {
        messages: [
          { role: 'system', content: PROMPT },
          { role: 'user', content: 'hi' },
          { role: 'system', content: REMINDER },
          { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'read', arguments: ARGS } }] },
          { role: 'tool', tool_call_id: 'c1', content: 'file' },
          { role: lateRole, content: LATE },
          { role: 'user', content: 'go' },
        ],
      };
    case 'openai-responses':
      return {
        instructions: PROMPT,
        input: [
          { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'hi' }] },
          { type: 'message', role: 'system', content: [{ type: 'input_text', text: REMINDER }] },
          { type: 'function_call', call_id: 'c1', name: 'read', arguments: ARGS },
          { type: 'function_call_output', call_id: 'c1', output: 'file' },
          { type: 'message', role: lateRole, content: [{ type: 'input_text', text: LATE }] },
          { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'go' }] },
        ],
      };
    case 'anthropic': {
      const toolUse = { role: 'assistant', content: [{ type: 'tool_use', id: 'c1', name: 'read', input: { path: 'a.txt' } }] };
      const result = { type: 'tool_result', tool_use_id: 'c1', content: 'file' };
      if (beta) {
        return {
          system: PROMPT,
          messages: [
            { role: 'user', content: 'hi' },
            { role: 'system', content: REMINDER },
            toolUse,
            { role: 'user', content: [result] },
            { role: 'system', content: LATE },
            { role: 'user', content: 'go' },
          ],
        };
      }
      return {
        system: PROMPT,
        messages: [
          { role: 'user', content: [{ type: 'text', text: 'hi' }, { type: 'text', text: note(REMINDER) }] },
          toolUse,
          { role: 'user', content: [result, { type: 'text', text: note(LATE) }, { type: 'text', text: 'go' }] },
        ],
      };
    }
    case 'gemini':
      return {
        systemInstruction: { parts: [{ text: PROMPT }] },
        contents: [
          { role: 'user', parts: [{ text: 'hi' }, { text: note(REMINDER) }] },
          { role: 'model', parts: [{ functionCall: { id: 'c1', name: 'read', args: { path: 'a.txt' } }, thoughtSignature: 'skip_thought_signature_validator' }] },
          { role: 'user', parts: [{ functionResponse: { id: 'c1', name: 'read', response: { output: 'file' } } }, { text: note(LATE) }, { text: 'go' }] },
        ],
      };
  }
  throw new Error(upstream);
}

const upstreams = ['openai-chat', 'openai-responses', 'anthropic', 'gemini'] as const;

describe('positional system messages, every client x upstream', () => {
  for (const [client, { body, headers, developerLate }] of Object.entries(requests)) {
    describe(`from ${client}`, () => {
      const decode = () => getClientCodec(client as 'anthropic').decodeRequest(structuredClone(body), headers);

      it('keeps the system prompt apart and later system messages at their place in the IR', () => {
        const ir = decode();
        expect(ir.system).toEqual([{ type: 'text', text: PROMPT }]);
        expect(ir.messages.map((m) => m.role)).toEqual(['user', 'system', 'assistant', 'tool', 'system', 'user']);
        expect(ir.messages[1]!.parts).toEqual([{ type: 'text', text: REMINDER }]);
        expect(ir.messages[4]!.developer === true).toBe(developerLate === true);
      });

      for (const upstream of upstreams) {
        it(`-> ${upstream}`, () => {
          const ir: IrRequest = { ...decode(), model: 'test-model' };
          const encoded = getUpstreamCodec(upstream).encodeRequest(ir);
          expect(encoded).toMatchObject(expected(upstream, developerLate === true, ir.betas !== undefined));
        });
      }
    });
  }

  it('folds into a system note for Anthropic when the client did not ask for the beta, and forwards the flags it did ask for', () => {
    const { body } = requests.anthropic!;
    const plain = getClientCodec('anthropic').decodeRequest(structuredClone(body));
    expect(getUpstreamCodec('anthropic').encodeRequest({ ...plain, model: 'test-model' })).toMatchObject(expected('anthropic', false, false));
    expect(getUpstreamCodec('anthropic').requestHeaders?.(plain)).toEqual({});
    const withBeta = getClientCodec('anthropic').decodeRequest(structuredClone(body), requests.anthropic!.headers);
    expect(getUpstreamCodec('anthropic').requestHeaders?.(withBeta)).toEqual({ 'anthropic-beta': 'claude-code-20250219,mid-conversation-system-2026-04-07' });
  });

  it('makes system messages that open the conversation the system prompt (Anthropic messages[0], Chat, Responses input[0])', () => {
    const anthropic = getClientCodec('anthropic').decodeRequest({
      model: 'm',
      max_tokens: 10,
      system: 'a',
      messages: [{ role: 'system', content: 'b' }, { role: 'user', content: 'hi' }],
    });
    expect(anthropic.system.map((p) => p.text)).toEqual(['a', 'b']);
    expect(anthropic.messages.map((m) => m.role)).toEqual(['user']);
    const responses = getClientCodec('openai-responses').decodeRequest({
      model: 'm',
      instructions: 'a',
      input: [{ type: 'message', role: 'developer', content: 'b' }, { role: 'user', content: 'hi' }],
    });
    expect(responses.system.map((p) => p.text)).toEqual(['a', 'b']);
  });

  it('puts a note after a trailing assistant turn into a user turn of its own', () => {
    const ir = getClientCodec('openai-chat').decodeRequest({
      model: 'm',
      messages: [{ role: 'user', content: 'hi' }, { role: 'assistant', content: 'Sure' }, { role: 'system', content: REMINDER }],
    });
    expect(getUpstreamCodec('anthropic').encodeRequest(ir).messages).toEqual([
      { role: 'user', content: 'hi' },
      { role: 'assistant', content: 'Sure' },
      { role: 'user', content: note(REMINDER) },
    ]);
  });

  it('rejects an Anthropic user turn without content, naming it', () => {
    expect(() => getClientCodec('anthropic').decodeRequest({ model: 'm', max_tokens: 1, messages: [{ role: 'user' }] })).toThrow(/messages\[0\]\.content/);
  });

  it('stages keep it at its place: guardrail rewrites (as system text), compression fitting, the cache key', async () => {
    const ir = getClientCodec('anthropic').decodeRequest(structuredClone(requests.anthropic!.body), requests.anthropic!.headers);
    const sources: string[] = [];
    const redacted = mapRequestTexts(ir, (text, source) => {
      sources.push(source);
      return text.replace('macOS', '[OS]');
    });
    expect(redacted.messages.map((m) => m.role)).toEqual(['user', 'system', 'assistant', 'tool', 'system', 'user']);
    expect(redacted.messages[1]!.parts).toEqual([{ type: 'text', text: 'The user is on [OS].' }]);
    expect(sources.filter((s) => s === 'system')).toHaveLength(3);
    const fitted = await fitRequest(ir, { budget: 100_000, toolOutputMaxTokens: 1000, model: 'm', contextLength: 200_000 });
    expect(fitted.request.messages.map((m) => m.role)).toEqual(['user', 'system', 'assistant', 'tool', 'system', 'user']);
    const moved = { ...ir, messages: [ir.messages[0]!, ir.messages[2]!, ir.messages[3]!, ir.messages[1]!, ir.messages[4]!, ir.messages[5]!] };
    expect(cacheKey(moved, 'p')).not.toBe(cacheKey(ir, 'p'));
  });

  it('keeps the developer role only for servers that know it (OpenAI); other Chat servers get system', () => {
    const ir = { ...getClientCodec('openai-chat').decodeRequest(structuredClone(requests['openai-chat']!.body)), model: 'test-model' };
    const roles = (developerRole: boolean) => (getUpstreamCodec('openai-chat').encodeRequest(ir, { developerRole }).messages as Array<{ role: string }>).map((m) => m.role);
    expect(roles(true)).toEqual(['system', 'user', 'system', 'assistant', 'tool', 'developer', 'user']);
    expect(roles(false)).toEqual(['system', 'user', 'system', 'assistant', 'tool', 'system', 'user']);
  });
});
