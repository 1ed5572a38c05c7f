import { expect, it } from 'vitest';
import type { IrRequest } from '../../src/daemon/translate/ir.js';
import { getUpstreamCodec } from '../../src/daemon/translate/registry.js';

const base = (extra: Partial<IrRequest> = {}): IrRequest => ({
  model: 'claude-sonnet-4-5',
  system: [],
  messages: [{ role: 'user', parts: [{ type: 'text', text: 'hi' }] }],
  stream: false,
  ...extra,
});
const encode = (r: IrRequest) => getUpstreamCodec('anthropic').encodeRequest(r);

// Gemini CLI sends temperature 1, topP 0.95 and topK 64 on every request; the current Claude models answer
// 400 "`temperature` and `top_p` cannot both be specified for this model".
it('sends temperature or top_p to Anthropic, never both (temperature wins)', () => {
  const both = base({ temperature: 1, topP: 0.95, topK: 64 });
  const body = encode(both);
  expect(body).toMatchObject({ temperature: 1, top_k: 64 });
  expect(body).not.toHaveProperty('top_p');
  expect(both.dropped).toEqual(['top_p (temperature set)']);
  expect(encode(base({ topP: 0.9 })).top_p).toBe(0.9);
  // With thinking on, temperature is dropped, so top_p alone goes out.
  expect(encode(base({ temperature: 0.5, topP: 0.95, reasoning: { budgetTokens: 2048 } }))).toMatchObject({ top_p: 0.95 });
});
