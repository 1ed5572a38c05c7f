import { describe, expect, it } from 'vitest';
import { getClientCodec, getUpstreamCodec } from '../../src/daemon/translate/registry.js';

/**
 * OpenAI-format clients of Anthropic-backed gateways (LiteLLM, OpenRouter) mark prompt-cache breakpoints with
 * Anthropic's `cache_control` on content parts, messages and tools. Carried through the IR, each marker
 * reaches the Anthropic upstream on the block the client put it on (the golden case `usage-cache` covers
 * the system part and a tool; these cover the rest).
 */
const toAnthropic = (body: Record<string, unknown>) => {
  const ir = getClientCodec('openai-chat').decodeRequest({ model: 'm', ...body });
  return getUpstreamCodec('anthropic').encodeRequest(ir);
};
const eph = { type: 'ephemeral' } as const;

describe('cache_control from an OpenAI-format client to Anthropic', () => {
  it('on user content parts: text, image and file keep their marker; unmarked parts get none', () => {
    const body = toAnthropic({
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'A long document follows.', cache_control: eph },
            { type: 'image_url', image_url: { url: 'https://example.com/a.png' }, cache_control: { type: 'ephemeral', ttl: '1h' } },
            { type: 'file', file: { file_data: 'data:application/pdf;base64,JVBERi0=', filename: 'a.pdf' }, cache_control: eph },
            { type: 'text', text: 'What does it say?' },
          ],
        },
      ],
    });
    expect(body.messages).toEqual([
      {
        role: 'user',
        content: [
          { type: 'text', text: 'A long document follows.', cache_control: eph },
          { type: 'image', source: { type: 'url', url: 'https://example.com/a.png' }, cache_control: { type: 'ephemeral', ttl: '1h' } },
          { type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: 'JVBERi0=' }, title: 'a.pdf', cache_control: eph },
          { type: 'text', text: 'What does it say?' },
        ],
      },
    ]);
  });

  it('on a message with string content (LiteLLM form): the marker goes on its last block, system included', () => {
    const body = toAnthropic({
      messages: [
        { role: 'system', content: 'You are terse.', cache_control: eph },
        { role: 'user', content: 'Long context here.', cache_control: eph },
        { role: 'assistant', content: 'Noted.', cache_control: eph },
        { role: 'user', content: 'Go on.' },
      ],
    });
    expect(body.system).toEqual([{ type: 'text', text: 'You are terse.', cache_control: eph }]);
    expect(body.messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'Long context here.', cache_control: eph }] },
      { role: 'assistant', content: [{ type: 'text', text: 'Noted.', cache_control: eph }] },
      { role: 'user', content: 'Go on.' },
    ]);
  });

  it('on tool calls, tool results and tools', () => {
    const body = toAnthropic({
      messages: [
        { role: 'user', content: 'Look it up.' },
        { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'lookup', arguments: '{"q":"x"}' } }], cache_control: eph },
        { role: 'tool', tool_call_id: 'call_1', content: [{ type: 'text', text: 'a big result', cache_control: eph }] },
        { role: 'user', content: 'Thanks.', cache_control: { type: 'ephemeral', ttl: '5m' } },
      ],
      tools: [{ type: 'function', function: { name: 'lookup', parameters: { type: 'object' } }, cache_control: eph }],
    });
    expect(body.messages).toEqual([
      { role: 'user', content: 'Look it up.' },
      { role: 'assistant', content: [{ type: 'tool_use', id: 'call_1', name: 'lookup', input: { q: 'x' }, cache_control: eph }] },
      {
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: 'call_1', content: [{ type: 'text', text: 'a big result', cache_control: eph }] },
          { type: 'text', text: 'Thanks.', cache_control: { type: 'ephemeral', ttl: '5m' } },
        ],
      },
    ]);
    expect(body.tools).toEqual([{ name: 'lookup', input_schema: { type: 'object' }, cache_control: eph }]);
  });

  it('ignores markers that are not Anthropic-shaped, and sends none to a Chat Completions upstream', () => {
    const request = { messages: [{ role: 'user', content: [{ type: 'text', text: 'hi', cache_control: { type: 'forever' } }] }] };
    expect(toAnthropic(request).messages).toEqual([{ role: 'user', content: 'hi' }]);
    const ir = getClientCodec('openai-chat').decodeRequest({ model: 'm', messages: [{ role: 'user', content: [{ type: 'text', text: 'hi', cache_control: eph }] }] });
    expect(JSON.stringify(getUpstreamCodec('openai-chat').encodeRequest(ir))).not.toContain('cache_control');
  });
});
