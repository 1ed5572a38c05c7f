import { describe, expect, it } from 'vitest';
import type { ClientCodec } from '../../src/daemon/translate/codec.js';
import type { IrResponse, SignatureIssuer } from '../../src/daemon/translate/ir.js';
import { getClientCodec, getUpstreamCodec } from '../../src/daemon/translate/registry.js';
import { SKIP_SIGNATURE } from '../../src/daemon/translate/formats/gemini/encode-contents.js';
import { holdsWrappedSignature } from '../../src/daemon/translate/util/signature.js';

/**
 * Opaque reasoning signatures go back only to the family that issued them, for every client x upstream
 * pair, in both directions: a signature an upstream put in a reply, handed to a client of any format and
 * replayed by it, reaches that upstream family again and no other; a signature a client holds natively
 * (its own format's) reaches only upstreams of that family. Gemini CLI's placeholder never becomes an
 * Anthropic thinking block.
 */

const CLIENTS = ['anthropic', 'openai-chat', 'openai-responses', 'gemini'] as const;
const UPSTREAMS = ['anthropic', 'openai-chat', 'openai-responses', 'gemini'] as const;
type Client = (typeof CLIENTS)[number];
type Upstream = (typeof UPSTREAMS)[number];

const SIG: Record<SignatureIssuer, string> = { anthropic: 'EqSIGanthropic1', gemini: 'CiSIGgemini1', openai: 'gAAAASIGopenai1' };
/** The family an upstream format's signatures come from, and the one it accepts (Chat Completions sends none). */
const FAMILY: Record<Upstream, SignatureIssuer | undefined> = { anthropic: 'anthropic', 'openai-chat': undefined, 'openai-responses': 'openai', gemini: 'gemini' };
/** The family whose signatures a client format holds natively (Chat: LiteLLM's Anthropic thinking_blocks). */
const NATIVE: Record<Client, SignatureIssuer> = { anthropic: 'anthropic', 'openai-chat': 'anthropic', 'openai-responses': 'openai', gemini: 'gemini' };

const CALL = { type: 'tool_call' as const, id: 'call_1', name: 'read', arguments: '{"path":"a"}' };

/** A reply of an upstream family, in that upstream's own wire format (written by the codec of that format). */
function upstreamReply(upstream: Upstream): unknown {
  const issuer = FAMILY[upstream] ?? 'anthropic';
  const response: IrResponse = {
    id: 'resp_1',
    model: 'm',
    parts: [{ type: 'thinking', text: 'plan', signature: SIG[issuer], issuer }, CALL],
    finishReason: 'tool_calls',
  };
  const request = { model: 'm', system: [], messages: [], stream: false };
  return getClientCodec(upstream).encodeResponse(response, request, { newId: (p) => `${p}x`, now: () => 1 });
}

type Json = Record<string, any>;

/** The conversation a client sends next: its question, the assistant turn replayed as the client keeps it, the tool result. */
function replay(client: Client, reply: Json): Json {
  switch (client) {
    case 'anthropic':
      return {
        model: 'm',
        max_tokens: 100,
        messages: [
          { role: 'user', content: 'q' },
          { role: 'assistant', content: reply.content },
          { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'call_1', content: 'ok' }] },
        ],
      };
    case 'openai-chat':
      return {
        model: 'm',
        messages: [{ role: 'user', content: 'q' }, reply.choices[0].message, { role: 'tool', tool_call_id: 'call_1', content: 'ok' }],
      };
    case 'openai-responses':
      return { model: 'm', input: [{ role: 'user', content: 'q' }, ...reply.output, { type: 'function_call_output', call_id: 'call_1', output: 'ok' }] };
    case 'gemini':
      return {
        model: 'm',
        contents: [
          { role: 'user', parts: [{ text: 'q' }] },
          reply.candidates[0].content,
          { role: 'user', parts: [{ functionResponse: { id: 'call_1', name: 'read', response: { output: 'ok' } } }] },
        ],
      };
  }
}

/** A history as a client holds it natively: its own format's signed thinking before a tool call. */
function nativeHistory(client: Client, signature: string): Json {
  const reply = getClientCodec(client).encodeResponse(
    { id: 'resp_1', model: 'm', parts: [{ type: 'thinking', text: 'plan', signature, issuer: NATIVE[client] }, CALL], finishReason: 'tool_calls' },
    { model: 'm', system: [], messages: [], stream: false },
    { newId: (p) => `${p}x`, now: () => 1 },
  ) as Json;
  return replay(client, reply);
}

/** Every signature the body would send to that upstream. */
function sentSignatures(upstream: Upstream, body: Json): string[] {
  const out: string[] = [];
  const walk = (v: unknown): void => {
    if (Array.isArray(v)) v.forEach(walk);
    else if (v && typeof v === 'object') {
      const o = v as Json;
      if (upstream === 'anthropic' && o.type === 'thinking') out.push(o.signature);
      if (upstream === 'anthropic' && o.type === 'redacted_thinking') out.push(o.data);
      if (upstream === 'gemini' && typeof o.thoughtSignature === 'string') out.push(o.thoughtSignature);
      if (upstream === 'openai-responses' && o.type === 'reasoning') out.push(o.encrypted_content);
      if (upstream === 'openai-chat' && (o.signature || o.thinking_blocks)) out.push(JSON.stringify(o));
      Object.values(o).forEach(walk);
    }
  };
  walk(body);
  return out.filter((s) => s !== SKIP_SIGNATURE);
}

function encodeTo(upstream: Upstream, client: ClientCodec, body: Json): Json {
  const ir = client.decodeRequest(body);
  return getUpstreamCodec(upstream).encodeRequest({ ...ir, model: 'test-model' }) as Json;
}

describe('signatures return only to their issuer', () => {
  for (const origin of UPSTREAMS) {
    for (const client of CLIENTS) {
      describe(`issued by a ${origin} upstream, held by a ${client} client`, () => {
        const issuer = FAMILY[origin] ?? 'anthropic';
        const reply = getClientCodec(client).encodeResponse(getUpstreamCodec(origin).decodeResponse(upstreamReply(origin)), { model: 'm', system: [], messages: [], stream: false }) as Json;
        const next = replay(client, reply);

        for (const target of UPSTREAMS) {
          it(`-> ${target}`, () => {
            const sent = sentSignatures(target, encodeTo(target, getClientCodec(client), structuredClone(next)));
            expect(sent).toEqual(FAMILY[target] === issuer ? [SIG[issuer]] : []);
          });
        }
      });
    }
  }

  for (const client of CLIENTS) {
    describe(`a ${client} client's own signatures`, () => {
      for (const target of UPSTREAMS) {
        it(`-> ${target}`, () => {
          const sig = SIG[NATIVE[client]];
          const sent = sentSignatures(target, encodeTo(target, getClientCodec(client), nativeHistory(client, sig)));
          expect(sent).toEqual(FAMILY[target] === NATIVE[client] ? [sig] : []);
        });
      }
    });
  }

  it("Gemini CLI's placeholder on a function call never becomes an Anthropic thinking block", () => {
    const body = {
      model: 'm',
      contents: [
        { role: 'user', parts: [{ text: 'q' }] },
        { role: 'model', parts: [{ functionCall: { name: 'read', args: { path: 'a' } }, thoughtSignature: SKIP_SIGNATURE }] },
        { role: 'user', parts: [{ functionResponse: { name: 'read', response: { output: 'ok' } } }] },
      ],
    };
    const anthropic = encodeTo('anthropic', getClientCodec('gemini'), body);
    expect(anthropic.messages[1].content).toEqual([{ type: 'tool_use', id: 'call_0', name: 'read', input: { path: 'a' } }]);
    expect(sentSignatures('openai-responses', encodeTo('openai-responses', getClientCodec('gemini'), body))).toEqual([]);
    const gemini = encodeTo('gemini', getClientCodec('gemini'), body);
    expect(gemini.contents[1].parts[0].thoughtSignature).toBe(SKIP_SIGNATURE);
  });

  it("Anthropic's redacted thinking, handed to any client, goes back to Anthropic only", () => {
    for (const client of CLIENTS) {
      const response: IrResponse = { id: 'r', model: 'm', parts: [{ type: 'redacted_thinking', data: 'REDACTEDdata' }, CALL], finishReason: 'tool_calls' };
      const reply = getClientCodec(client).encodeResponse(response, { model: 'm', system: [], messages: [], stream: false }) as Json;
      const next = replay(client, reply);
      for (const target of UPSTREAMS) {
        const sent = sentSignatures(target, encodeTo(target, getClientCodec(client), structuredClone(next)));
        expect(sent, `${client} -> ${target}`).toEqual(target === 'anthropic' ? ['REDACTEDdata'] : []);
      }
    }
  });

  it('tells a same-format body that replays another family\'s signature (it must not be passed through as is)', () => {
    for (const client of CLIENTS) {
      expect(holdsWrappedSignature(client, nativeHistory(client, SIG[NATIVE[client]])), client).toBe(false);
      const foreign = UPSTREAMS.find((u) => FAMILY[u] && FAMILY[u] !== NATIVE[client])!;
      const reply = getClientCodec(client).encodeResponse(getUpstreamCodec(foreign).decodeResponse(upstreamReply(foreign)), { model: 'm', system: [], messages: [], stream: false }) as Json;
      expect(holdsWrappedSignature(client, replay(client, reply)), `${client} holding ${foreign}'s`).toBe(true);
    }
  });
});
