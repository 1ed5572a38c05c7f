import { z } from 'zod';
import type { Family } from '../../../src/daemon/families/family.js';
import { ReplyError } from '../../../src/daemon/families/family.js';
import { CodecError } from '../../../src/daemon/translate/errors.js';

/**
 * A made-up endpoint family, only for the test that a new family is one folder plus one registry line:
 * `POST /v1/fixture/tokenize` `{model, text}` -> the upstream's `POST {base}/tokenize` `{model, text}` ->
 * `{tokens: number[]}` -> the client's `{object: "tokenization", model, count, tokens}`.
 */
export const tokenizeFamily: Family<{ model: string; text: string }> = {
  name: 'fixture-tokenize',
  route: {
    path: '/v1/fixture/tokenize',
    body: 'json',
    summary: 'Test fixture: tokenization',
    reply: { json: z.object({ object: z.literal('tokenization'), model: z.string(), count: z.number(), tokens: z.array(z.number()) }) },
  },
  read({ json }) {
    if (typeof json?.model !== 'string') throw new CodecError(400, "The 'model' field is required.", { param: 'model' });
    if (typeof json.text !== 'string') throw new CodecError(400, "'text' must be a string.", { param: 'text' });
    return { model: json.model, text: json.text };
  },
  call: (ask) => ({ model: ask.model, raw: { model: ask.model, characters: ask.text.length }, stream: false }),
  encode: (ask, target) => ({ path: 'tokenize', body: JSON.stringify({ model: target.model, text: ask.text }), contentType: 'application/json', accept: 'application/json' }),
  decode([reply], _ask, target) {
    const tokens = (JSON.parse(reply!.text) as { tokens?: unknown }).tokens;
    if (!Array.isArray(tokens)) throw new ReplyError('no tokens in the reply');
    return {
      body: JSON.stringify({ object: 'tokenization', model: target.publicModel, count: tokens.length, tokens }),
      contentType: 'application/json; charset=utf-8',
      usage: { inputTokens: tokens.length, outputTokens: 0 },
    };
  },
};
