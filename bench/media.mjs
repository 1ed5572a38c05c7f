#!/usr/bin/env node
// Media endpoints through router vs straight to the upstream: one figure per family (issue 17). Not a test.
//
//   npx tsc -p tsconfig.json && node bench/media.mjs [--seconds 6] [--connections 8] [--file-kb 1024]
//
// Starts a canned OpenAI-shaped upstream in its own process and the real daemon (dist/) with an OpenAI
// connection pointed at it, then drives each endpoint with an undici Pool for `--seconds`, first directly
// at the upstream, then through router, alternating twice so both see the same background load:
//  - transcription: multipart upload of a `--file-kb` file to /v1/audio/transcriptions (json reply); req/s
//    and MB/s of audio uploaded;
//  - speech: /v1/audio/speech, whose upstream sends 8 x 16 KiB audio chunks 20 ms apart: time to the first
//    audio byte and to the last (a buffering proxy would show first == last);
//  - images: /v1/images/generations with a ~200 KB b64_json reply; req/s;
//  - moderation: /v1/moderations; req/s and p50 latency.
import { Pool } from 'undici';
import { opt, startDaemon, startMock } from './lib/bench-daemon.mjs';

const SECONDS = opt('seconds', 6);
const CONNECTIONS = opt('connections', 8);
const FILE_KB = opt('file-kb', 1024);

const MOCK = `
import { createServer } from 'node:http';
const image = JSON.stringify({ created: 1, data: [{ b64_json: 'A'.repeat(200_000) }] });
const moderation = JSON.stringify({ id: 'modr-1', model: 'omni-moderation-latest', results: [{ flagged: false, categories: { violence: false }, category_scores: { violence: 0.001 } }] });
const chunk = Buffer.alloc(16 * 1024, 7);
const server = createServer((req, res) => {
  let size = 0;
  req.on('data', (c) => (size += c.length));
  req.on('end', async () => {
    if (req.url.endsWith('/audio/speech')) {
      res.writeHead(200, { 'content-type': 'audio/mpeg' });
      res.flushHeaders();
      for (let i = 0; i < 8; i++) {
        if (i > 0) await new Promise((r) => setTimeout(r, 20));
        res.write(chunk);
      }
      return res.end();
    }
    const body = req.url.endsWith('/audio/transcriptions')
      ? JSON.stringify({ text: 'Hello from the bench upstream.', usage: { type: 'duration', seconds: Math.ceil(size / 16000) } })
      : req.url.endsWith('/images/generations') ? image : moderation;
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
    res.end(body);
  });
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => process.send({ port: server.address().port }));
`;

function multipart(model) {
  const boundary = '----bench0123456789';
  const head = Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="model"\r\n\r\n${model}\r\n--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="a.mp3"\r\nContent-Type: audio/mpeg\r\n\r\n`);
  const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
  return { body: Buffer.concat([head, Buffer.alloc(FILE_KB * 1024, 3), tail]), contentType: `multipart/form-data; boundary=${boundary}` };
}

/** One family's request for a base (`/v1` of the upstream, or router's `/v1`) and the model id it takes. */
const FAMILIES = {
  transcription: (model) => {
    const m = multipart(model);
    return { path: '/audio/transcriptions', body: m.body, contentType: m.contentType };
  },
  speech: (model) => ({ path: '/audio/speech', body: JSON.stringify({ model, voice: 'alloy', input: 'Hello there, listener.' }), contentType: 'application/json' }),
  images: (model) => ({ path: '/images/generations', body: JSON.stringify({ model, prompt: 'a red fox' }), contentType: 'application/json' }),
  moderation: (model) => ({ path: '/moderations', body: JSON.stringify({ model, input: 'a nice day' }), contentType: 'application/json' }),
};
const MODELS = { transcription: 'whisper-1', speech: 'tts-1', images: 'dall-e-3', moderation: 'omni-moderation-latest' };

async function drive(origin, prefix, key, family, model, seconds) {
  const pool = new Pool(origin, { connections: CONNECTIONS, pipelining: 1 });
  const req = FAMILIES[family](model);
  const headers = { authorization: `Bearer ${key}`, 'content-type': req.contentType };
  const until = performance.now() + seconds * 1000;
  let ok = 0;
  let failed = 0;
  const latencies = [];
  const firstBytes = [];
  const worker = async () => {
    while (performance.now() < until) {
      try {
        const t = performance.now();
        const r = await pool.request({ method: 'POST', path: `${prefix}${req.path}`, headers, body: req.body });
        let first;
        for await (const c of r.body) if (first === undefined && c.length) first = performance.now() - t;
        latencies.push(performance.now() - t);
        firstBytes.push(first ?? 0);
        if (r.statusCode === 200) ok++;
        else failed++;
      } catch {
        failed++;
      }
    }
  };
  const t0 = performance.now();
  await Promise.all(Array.from({ length: CONNECTIONS }, worker));
  const secs = (performance.now() - t0) / 1000;
  await pool.close();
  return { ok, failed, secs, latencies, firstBytes };
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)] ?? 0;

const mock = await startMock(MOCK);
const daemon = await startDaemon({ name: 'media' });
const { key } = await daemon.manage('POST', '/api/keys', { name: 'bench', scopes: ['proxy'] });
await daemon.manage('POST', '/api/providers', { provider: 'openai', apiKey: 'sk-bench', providerSpecificData: { baseUrl: `http://127.0.0.1:${mock.port}/v1` } });
const upstream = `http://127.0.0.1:${mock.port}`;
const rows = [];
try {
  for (const family of Object.keys(FAMILIES)) {
    const totals = { direct: { ok: 0, failed: 0, secs: 0, lat: [], first: [] }, router: { ok: 0, failed: 0, secs: 0, lat: [], first: [] } };
    await drive(daemon.url, '/v1', key, family, `openai/${MODELS[family]}`, 1); // warm-up
    for (let round = 0; round < 4; round++) {
      for (const via of round % 2 ? ['router', 'direct'] : ['direct', 'router']) {
        const r = via === 'direct'
          ? await drive(upstream, '/v1', 'sk-bench', family, MODELS[family], SECONDS / 4)
          : await drive(daemon.url, '/v1', key, family, `openai/${MODELS[family]}`, SECONDS / 4);
        const t = totals[via];
        t.ok += r.ok;
        t.failed += r.failed;
        t.secs += r.secs;
        t.lat.push(...r.latencies);
        t.first.push(...r.firstBytes);
      }
    }
    for (const via of ['direct', 'router']) {
      const t = totals[via];
      const rps = t.ok / t.secs;
      rows.push({
        family,
        via,
        rps: rps.toFixed(1),
        mbps: family === 'transcription' ? ((rps * FILE_KB) / 1024).toFixed(1) : '',
        p50: median(t.lat).toFixed(1),
        firstByte: family === 'speech' ? median(t.first).toFixed(1) : '',
        failed: t.failed,
      });
    }
  }
} finally {
  await daemon.stop();
  mock.stop();
}
console.log(`connections ${CONNECTIONS}, ${SECONDS} s per family and path, transcription file ${FILE_KB} KiB`);
console.log('| family | via | req/s | upload MB/s | p50 ms | first byte p50 ms | failed |');
console.log('| --- | --- | --- | --- | --- | --- | --- |');
for (const r of rows) console.log(`| ${r.family} | ${r.via} | ${r.rps} | ${r.mbps} | ${r.p50} | ${r.firstByte} | ${r.failed} |`);
