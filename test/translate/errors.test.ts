import { describe, expect, it } from 'vitest';
import type { IrError } from '../../src/daemon/translate/ir.js';
import { clientCodecs } from '../../src/daemon/translate/registry.js';

/** One error writer per client format: whole-reply bodies, stream endings, and the stream encoders agree with them. */

const error: IrError = { type: 'error', status: 502, message: 'The upstream connection failed mid-stream.' };
const overloaded: IrError = { type: 'error', status: 529, message: 'Overloaded' };

const bodies: Record<string, [IrError, unknown][]> = {
  'openai-chat': [[error, { error: { message: error.message, type: 'upstream_error', code: 'bad_gateway' } }]],
  'openai-completions': [[error, { error: { message: error.message, type: 'upstream_error', code: 'bad_gateway' } }]],
  'openai-responses': [[error, { error: { message: error.message, type: 'upstream_error', code: 'bad_gateway' } }]],
  anthropic: [
    [error, { type: 'error', error: { type: 'api_error', message: error.message } }],
    [overloaded, { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } }],
  ],
  gemini: [[error, { error: { code: 502, message: error.message, status: expect.any(String) } }]],
};

/** Router's own detail (its code, extra fields) in each format's place for it. */
const detail = { code: 'provider_circuit_open', provider: 'openai', retry_after: 30 };
const unavailable: IrError = { type: 'error', status: 503, message: 'Provider openai is temporarily unavailable.', errorType: 'server_error', code: 'provider_circuit_open' };
const detailed: Record<string, unknown> = {
  'openai-chat': { error: { message: unavailable.message, type: 'server_error', code: 'provider_circuit_open', provider: 'openai', retry_after: 30 } },
  'openai-completions': { error: { message: unavailable.message, type: 'server_error', code: 'provider_circuit_open', provider: 'openai', retry_after: 30 } },
  'openai-responses': { error: { message: unavailable.message, type: 'server_error', code: 'provider_circuit_open', provider: 'openai', retry_after: 30 } },
  anthropic: { type: 'error', error: { type: 'overloaded_error', message: unavailable.message, code: 'provider_circuit_open', provider: 'openai', retry_after: 30 } },
  gemini: {
    error: {
      code: 503,
      message: unavailable.message,
      status: 'UNAVAILABLE',
      details: [{ '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason: 'provider_circuit_open', domain: 'router', metadata: { provider: 'openai', retry_after: '30' } }],
    },
  },
};

describe('client codec error writers', () => {
  for (const [format, codec] of Object.entries(clientCodecs)) {
    it(`${format}: the JSON body in the format's own vocabulary`, () => {
      for (const [e, body] of bodies[format]!) expect(codec!.encodeError(e)).toEqual(body);
    });

    it(`${format}: router's detail (code, extra fields) where the format keeps it`, () => {
      expect(codec!.encodeError(unavailable, detail)).toEqual(detailed[format]);
    });

    it(`${format}: a stream it encodes ends the way encodeStreamError writes it`, () => {
      const encoder = codec!.createStreamEncoder({ model: 'm', system: [], messages: [], stream: true });
      encoder.write({ type: 'start', id: 'resp_1', model: 'm' });
      encoder.write({ type: 'text_delta', index: 0, text: 'Hi' });
      const written = [...encoder.write(error), ...encoder.end()].filter((m) => m.data !== '[DONE]');
      const expected = codec!.encodeStreamError(error, { id: 'resp_1', model: 'm', nextSequence: 0 });
      expect(written.map((m) => m.event)).toEqual(expected.map((m) => m.event));
      const strip = (d: string) => {
        const { sequence_number: _s, response: _r, ...rest } = JSON.parse(d) as Record<string, unknown>;
        return rest;
      };
      expect(written.map((m) => strip(m.data))).toEqual(expected.map((m) => strip(m.data)));
    });
  }

  it('Responses: error then response.failed, numbered on from the stream position', () => {
    const messages = clientCodecs['openai-responses']!.encodeStreamError(error, { id: 'resp_9', model: 'gpt-5', nextSequence: 7 });
    const data = messages.map((m) => JSON.parse(m.data) as Record<string, unknown>);
    expect(messages.map((m) => m.event)).toEqual(['error', 'response.failed']);
    expect(data.map((d) => d.sequence_number)).toEqual([7, 8]);
    expect(data[1]!.response).toMatchObject({ id: 'resp_9', model: 'gpt-5', status: 'failed', error: { code: 'bad_gateway', message: error.message } });
  });
});
