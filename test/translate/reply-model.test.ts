import { describe, expect, it } from 'vitest';
import type { IrRequest, IrResponse } from '../../src/daemon/translate/ir.js';
import { clientCodecs, getUpstreamCodec } from '../../src/daemon/translate/registry.js';
import { deterministicOptions } from './golden-support.js';

/**
 * A reply whose upstream leaves the model out (OpenAI-compatible servers and Gemini may) names the model the
 * request was sent for, in every client format, whole or streamed: never `""`.
 */
const request: IrRequest = { model: 'asked-model', system: [], messages: [{ role: 'user', parts: [{ type: 'text', text: 'hi' }] }], stream: false };

/** Where each client format names the model in a whole reply. */
const modelOf: Record<string, (body: Record<string, unknown>) => unknown> = {
  'openai-chat': (b) => b.model,
  'openai-completions': (b) => b.model,
  'openai-responses': (b) => b.model,
  anthropic: (b) => b.model,
  gemini: (b) => b.modelVersion,
};

/** Upstream replies without a model, as each format would send them. */
const modelless: Record<string, unknown> = {
  'openai-chat': { id: 'x', object: 'chat.completion', choices: [{ index: 0, message: { role: 'assistant', content: 'hello' }, finish_reason: 'stop' }] },
  gemini: { candidates: [{ content: { role: 'model', parts: [{ text: 'hello' }] }, finishReason: 'STOP' }] },
  anthropic: { id: 'msg_1', type: 'message', role: 'assistant', content: [{ type: 'text', text: 'hello' }], stop_reason: 'end_turn', usage: { input_tokens: 1, output_tokens: 1 } },
};

describe('the model of a reply whose upstream omits it', () => {
  for (const [upstream, body] of Object.entries(modelless)) {
    for (const [client, codec] of Object.entries(clientCodecs)) {
      it(`${upstream} -> ${client}: whole reply`, () => {
        const ir = getUpstreamCodec(upstream as 'openai-chat').decodeResponse(body);
        expect(ir.model).toBe('');
        const reply = codec.encodeResponse(ir, request, deterministicOptions()) as Record<string, unknown>;
        expect(modelOf[client]!(reply)).toBe('asked-model');
      });
    }
  }

  it('a reported model is kept', () => {
    const ir: IrResponse = { id: 'x', model: 'served-model-2025', parts: [{ type: 'text', text: 'hi' }], finishReason: 'stop' };
    for (const [client, codec] of Object.entries(clientCodecs)) {
      expect(modelOf[client]!(codec.encodeResponse(ir, request, deterministicOptions()) as Record<string, unknown>), client).toBe('served-model-2025');
    }
  });

  it('streams: a start event without a model names the requested one (Gemini and Responses clients too)', () => {
    for (const [client, codec] of Object.entries(clientCodecs)) {
      const enc = codec.createStreamEncoder({ ...request, stream: true }, deterministicOptions());
      const messages = [
        ...enc.write({ type: 'start', id: 'x', model: '' }),
        ...enc.write({ type: 'text_delta', index: 0, text: 'hi' }),
        ...enc.write({ type: 'block_stop', index: 0 }),
        ...enc.write({ type: 'finish', finishReason: 'stop', usage: { inputTokens: 1, outputTokens: 1 } }),
        ...enc.end(),
      ];
      const text = messages.map((m) => m.data).join('\n');
      expect(text, client).toContain('asked-model');
      expect(text, client).not.toMatch(/"(model|modelVersion)":""/);
    }
  });
});
