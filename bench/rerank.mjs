#!/usr/bin/env node
// Rerank throughput: POST /v1/rerank through the real daemon (dist/) against the same canned upstream
// called directly. Not a test.
//
//   npx tsc -p tsconfig.json && node bench/rerank.mjs [--seconds 12] [--rounds 4] [--connections 16] [--documents 20]
//
// One canned rerank upstream in its own process answers Jina's `/v1/rerank` and Cohere v2's `/v2/rerank`
// (scores precomputed, so the upstream costs next to nothing). The daemon gets a `jina` connection
// (same format: the body is passed on with the model rewritten) and a `cohere` one (translated: documents
// as strings, search units priced). Three targets are driven in alternating slices with an undici Pool,
// closed loop: the upstream directly, router -> Jina, router -> Cohere. Prints req/s, p50/p99 latency and
// the daemon's CPU time per request (Linux), the steadier figure on a shared machine.
import { Pool } from 'undici';
import { cpuMsOf as cpuMs } from './lib/procs.mjs';
import { opt, startDaemon, startMock } from './lib/bench-daemon.mjs';

const SECONDS = opt('seconds', 12);
const ROUNDS = opt('rounds', 4);
const CONNECTIONS = opt('connections', 16);
const DOCUMENTS = opt('documents', 20);

const MOCK = `
import { createServer } from 'node:http';
const n = ${DOCUMENTS};
const scores = Array.from({ length: n }, (_, i) => ({ index: i, relevance_score: 1 - i / n }));
const jina = JSON.stringify({ model: 'bench-reranker', usage: { total_tokens: 40 * n }, results: scores });
const cohere = JSON.stringify({ id: 'bench', results: scores, meta: { api_version: { version: '2' }, billed_units: { search_units: 1 } } });
const server = createServer((req, res) => {
  req.resume();
  req.on('end', () => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(req.url === '/v2/rerank' ? cohere : jina);
  });
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => process.send({ port: server.address().port }));
`;

const documents = Array.from({ length: DOCUMENTS }, (_, i) => `Document ${i}: a paragraph of about forty words on a subject the benchmark does not care about, long enough to look like a retrieved passage from a knowledge base.`);

async function drive(target, seconds) {
  const pool = new Pool(target.url, { connections: CONNECTIONS, pipelining: 1 });
  const body = JSON.stringify({ model: target.model, query: 'which passage answers the question', documents, top_n: 5 });
  const headers = { 'content-type': 'application/json', ...(target.key ? { authorization: `Bearer ${target.key}` } : {}) };
  const until = performance.now() + seconds * 1000;
  let ok = 0;
  let failed = 0;
  const latencies = [];
  const worker = async () => {
    while (performance.now() < until) {
      try {
        const t = performance.now();
        const r = await pool.request({ method: 'POST', path: target.path, headers, body });
        await r.body.text();
        latencies.push(performance.now() - t);
        if (r.statusCode === 200) ok++;
        else failed++;
      } catch {
        failed++;
      }
    }
  };
  const t0 = performance.now();
  await Promise.all(Array.from({ length: CONNECTIONS }, worker));
  const elapsed = (performance.now() - t0) / 1000;
  await pool.close();
  return { ok, failed, secs: elapsed, latencies };
}

const pct = (xs, p) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] ?? 0;
};

const mock = await startMock(MOCK);
const daemon = await startDaemon({ name: 'rerank' });
try {
  const { key } = await daemon.manage('POST', '/api/keys', { name: 'bench', scopes: ['proxy'] });
  const origin = `http://127.0.0.1:${mock.port}`;
  await daemon.manage('POST', '/api/providers', { provider: 'jina', apiKey: 'jina-bench', providerSpecificData: { baseUrl: `${origin}/v1` } });
  await daemon.manage('POST', '/api/providers', { provider: 'cohere', apiKey: 'co-bench', providerSpecificData: { baseUrl: `${origin}/compatibility/v1` } });
  const targets = {
    direct: { url: origin, path: '/v1/rerank', model: 'bench-reranker' },
    'router -> jina (same format)': { url: daemon.url, path: '/v1/rerank', model: 'jina/bench-reranker', key, daemon: true },
    'router -> cohere (translated)': { url: daemon.url, path: '/v1/rerank', model: 'cohere/rerank-v3.5', key, daemon: true },
  };
  const totals = Object.fromEntries(Object.keys(targets).map((k) => [k, { ok: 0, failed: 0, secs: 0, cpu: 0, lat: [] }]));
  for (const t of Object.values(targets)) await drive(t, 2); // warm-up
  const slice = SECONDS / ROUNDS;
  for (let round = 0; round < ROUNDS; round++) {
    const order = Object.keys(targets);
    if (round % 2) order.reverse();
    for (const name of order) {
      const before = cpuMs(daemon.pid);
      const r = await drive(targets[name], slice);
      const after = cpuMs(daemon.pid);
      const t = totals[name];
      t.ok += r.ok;
      t.failed += r.failed;
      t.secs += r.secs;
      t.lat.push(...r.latencies);
      if (targets[name].daemon && before != null && after != null) t.cpu += after - before;
    }
  }
  console.log(`rerank, ${DOCUMENTS} documents, top_n 5, ${CONNECTIONS} connections, ${SECONDS}s per target in ${ROUNDS} alternating slices`);
  console.log('target | req/s | p50 ms | p99 ms | router CPU ms/req | failed');
  for (const [name, t] of Object.entries(totals)) {
    const cpu = t.cpu && t.ok ? (t.cpu / t.ok).toFixed(3) : '-';
    console.log(`${name} | ${(t.ok / t.secs).toFixed(0)} | ${pct(t.lat, 50).toFixed(2)} | ${pct(t.lat, 99).toFixed(2)} | ${cpu} | ${t.failed}`);
  }
} finally {
  await daemon.stop();
  mock.stop();
}
