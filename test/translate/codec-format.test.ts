import { describe, expect, it } from 'vitest';
import { clientCodecs, upstreamCodecs } from '../../src/daemon/translate/registry.js';

/**
 * Codecs own their format: each upstream codec knows its paths, its model list and its error body; each
 * client codec whether a same-format upstream reports usage. Nothing outside translate/formats switches on
 * the format for these.
 */
describe('codecs own their format', () => {
  it('upstream paths', () => {
    expect(upstreamCodecs['openai-chat'].path('gpt-4o', true)).toBe('chat/completions');
    expect(upstreamCodecs['openai-responses'].path('gpt-4o', false)).toBe('responses');
    expect(upstreamCodecs.anthropic.path('claude', true)).toBe('messages');
    // The id is one path segment: a `/` or `..` in it never addresses another resource.
    expect(upstreamCodecs.gemini.path('tunedModels/a b', true)).toBe('models/tunedModels%2Fa%20b:streamGenerateContent?alt=sse');
    expect(upstreamCodecs.gemini.path('x/../../y', false)).toBe('models/x%2F..%2F..%2Fy:generateContent');
    expect(upstreamCodecs.gemini.path('gemini-2.5-pro', false)).toBe('models/gemini-2.5-pro:generateContent');
    expect(upstreamCodecs.anthropic.countTokensPath?.('claude')).toBe('messages/count_tokens');
    expect(upstreamCodecs.gemini.countTokensPath?.('g?x')).toBe('models/g%3Fx:countTokens');
    expect(upstreamCodecs['openai-chat'].countTokensPath).toBeUndefined();
  });

  it('model lists', () => {
    const openai = { object: 'list', data: [{ id: 'gpt-4o', context_length: 128000 }, { id: 'o3' }, { nope: 1 }] };
    expect(upstreamCodecs['openai-chat'].parseModels(openai)).toEqual([{ id: 'gpt-4o', contextLength: 128000 }, { id: 'o3' }]);
    expect(upstreamCodecs.anthropic.parseModels({ data: [{ id: 'claude-sonnet-4-5', display_name: 'Claude' }], has_more: false })).toEqual([{ id: 'claude-sonnet-4-5' }]);
    expect(upstreamCodecs.gemini.parseModels({ models: [{ name: 'models/gemini-2.5-pro', inputTokenLimit: 1048576 }] })).toEqual([
      { id: 'gemini-2.5-pro', contextLength: 1048576 },
    ]);
    expect(upstreamCodecs.gemini.parseModels({ data: [{ id: 'x' }] })).toEqual([]);
  });

  it('error bodies: each format reads only its own shape', () => {
    const openai = { error: { message: 'Rate limit', type: 'requests', code: 'rate_limit_exceeded', param: null } };
    const anthropic = { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } };
    const gemini = [{ error: { code: 429, message: 'Quota', status: 'RESOURCE_EXHAUSTED' } }];
    expect(upstreamCodecs['openai-chat'].readError(openai)).toEqual({ message: 'Rate limit', code: 'rate_limit_exceeded', type: 'requests' });
    expect(upstreamCodecs.anthropic.readError(anthropic)).toEqual({ message: 'Overloaded', code: 'overloaded_error', type: 'overloaded_error' });
    expect(upstreamCodecs.gemini.readError(gemini)).toEqual({ message: 'Quota', code: 'RESOURCE_EXHAUSTED' });
    expect(upstreamCodecs.anthropic.readError(openai)).toBeUndefined();
    expect(upstreamCodecs.gemini.readError(openai)).toBeUndefined();
    expect(upstreamCodecs['openai-chat'].readError({ message: 'no error object' })).toBeUndefined();
    expect(upstreamCodecs['openai-chat'].readError('<html>')).toBeUndefined();
  });

  it('client codecs say whether a same-format stream reports usage', () => {
    expect(clientCodecs.anthropic.usageReported({})).toBe(true);
    expect(clientCodecs['openai-chat'].usageReported({ stream_options: { include_usage: true } })).toBe(true);
    expect(clientCodecs['openai-chat'].usageReported({})).toBe(false);
    expect(clientCodecs.gemini.usageReported({})).toBe(false);
  });
});
