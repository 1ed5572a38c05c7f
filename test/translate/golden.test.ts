import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { ClientCodec, UpstreamCodec } from '../../src/daemon/translate/codec.js';
import { clientCodecs, upstreamCodecs } from '../../src/daemon/translate/registry.js';
import { byteChunks, checkIrStream, deterministicOptions, listCases, parseSseText, pick, readCase, readJson, runStream, type CaseInfo } from './golden-support.js';

/**
 * Golden corpus: every case x every registered client format x every registered upstream format.
 * Registering a new codec in registry.ts automatically runs it against every case (and fails until the case
 * has that format's files). Layout and naming are described in test/fixtures/translate/README.md.
 */

const clients = Object.entries(clientCodecs) as Array<[string, ClientCodec]>;
const upstreams = Object.entries(upstreamCodecs) as Array<[string, UpstreamCodec]>;

function expectedFiles(name: string, info: CaseInfo, c: string, u: string) {
  const ext = info.stream ? 'sse' : 'json';
  return {
    request: pick(name, [`request.${c}.json`]),
    upstreamRequest: pick(name, [`upstream-request.${u}.from-${c}.json`, `upstream-request.${u}.json`]),
    upstreamReply: pick(name, [info.stream ? `upstream-stream.${u}.sse` : `upstream-response.${u}.json`]),
    response: pick(name, [`response.${c}.from-${u}.${ext}`, `response.${c}.${ext}`]),
  };
}

/**
 * Upstream formats that wrap another one in an envelope (Google's Code Assist API around Gemini): they run
 * on the wrapped format's files, the expected request put in the envelope and the replies wrapped as the
 * API sends them (`{response}` around each body and stream chunk).
 */
const ENVELOPES: Record<string, { inner: string; fields: Record<string, unknown> }> = {
  'gemini-code-assist': { inner: 'gemini', fields: {} },
  antigravity: { inner: 'gemini', fields: { userAgent: 'antigravity', requestType: 'agent', requestId: expect.stringMatching(/^agent-/) } },
};

function wrapSse(raw: string): string {
  return raw.replace(/^data: (.+)$/gm, (line, data: string) => {
    try {
      return `data: ${JSON.stringify({ response: JSON.parse(data) })}`;
    } catch {
      return line;
    }
  });
}

function runCase(name: string, info: CaseInfo, [c, client]: [string, ClientCodec], [u, upstream]: [string, UpstreamCodec]): void {
  const env = ENVELOPES[u];
  const files = expectedFiles(name, info, c, env?.inner ?? u);
  for (const [kind, path] of Object.entries(files)) expect(path, `${name}: missing ${kind} file for ${c} -> ${u}`).toBeDefined();
  const request = client.decodeRequest(readJson(files.request!));
  request.model = 'test-model';
  const expectedRequest = readJson(files.upstreamRequest!);
  expect(upstream.encodeRequest(request), 'upstream request').toEqual(env ? { model: 'test-model', ...env.fields, request: expectedRequest } : expectedRequest);
  // Encoding may note dropped fields on the request; the reply side must not depend on that.
  if (!info.stream) {
    const body = readJson(files.upstreamReply!);
    const reply = upstream.decodeResponse(env ? { response: body } : body);
    expect(client.encodeResponse(reply, request, deterministicOptions()), 'client response').toEqual(readJson(files.response!));
    return;
  }
  const plain = readFileSync(files.upstreamReply!, 'utf8');
  const raw = env ? wrapSse(plain) : plain;
  const whole = runStream([raw], upstream, client, request, deterministicOptions());
  expect(checkIrStream(whole.events), 'IR stream rules').toEqual([]);
  expect(parseSseText(whole.text), 'client stream').toEqual(parseSseText(readFileSync(files.response!, 'utf8')));
  const chunked = runStream(byteChunks(raw, 5), upstream, client, request, deterministicOptions());
  expect(chunked.text, 'same stream when the upstream bytes arrive 5 at a time').toBe(whole.text);
}

for (const name of listCases()) {
  const info = readCase(name);
  describe(`golden ${name}`, () => {
    for (const c of clients) {
      if (info.skipClients?.includes(c[0])) continue;
      for (const u of upstreams) {
        if (info.skipUpstreams?.includes(ENVELOPES[u[0]]?.inner ?? u[0])) continue;
        // The legacy completions upstream serves only legacy completions clients (proxy/chat.ts upstreamFormatFor).
        if (u[0] === 'openai-completions' && c[0] !== 'openai-completions') continue;
        it(`${c[0]} -> ${u[0]}`, () => runCase(name, info, c, u));
      }
    }
  });
}

describe('golden corpus', () => {
  it('has cases', () => {
    expect(listCases().length).toBeGreaterThan(0);
  });
});
