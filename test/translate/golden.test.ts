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

function runCase(name: string, info: CaseInfo, [c, client]: [string, ClientCodec], [u, upstream]: [string, UpstreamCodec]): void {
  const files = expectedFiles(name, info, c, u);
  for (const [kind, path] of Object.entries(files)) expect(path, `${name}: missing ${kind} file for ${c} -> ${u}`).toBeDefined();
  const request = client.decodeRequest(readJson(files.request!));
  request.model = 'test-model';
  expect(upstream.encodeRequest(request), 'upstream request').toEqual(readJson(files.upstreamRequest!));
  // Encoding may note dropped fields on the request; the reply side must not depend on that.
  if (!info.stream) {
    const reply = upstream.decodeResponse(readJson(files.upstreamReply!));
    expect(client.encodeResponse(reply, request, deterministicOptions()), 'client response').toEqual(readJson(files.response!));
    return;
  }
  const raw = readFileSync(files.upstreamReply!, 'utf8');
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
        if (info.skipUpstreams?.includes(u[0])) continue;
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
