#!/usr/bin/env node
// Batch throughput: a local batch (`POST /v1/files` + `POST /v1/batches`, mode local) through the real daemon
// (dist/) against a canned OpenAI upstream, at several `batchConcurrency` settings, beside the same
// requests sent by a client straight to router's `/v1/chat/completions` at the same concurrency. Not a test.
//
//   npx tsc -p tsconfig.json && node bench/batch.mjs [--lines 2000] [--latency 0] [--concurrency 1,8,32]
//
// The upstream answers a small chat completion after `--latency` ms (0: as fast as it can). A batch's
// time runs from `POST /v1/batches` until `GET /v1/batches/{id}` (polled every 20 ms) says `completed`;
// lines/s = lines / that time. Router's CPU time per line (Linux /proc) is the steadier figure on a shared
// machine. Each concurrency runs the batch and the client loop in alternating order over two rounds.
import { Pool } from 'undici';
import { cpuMsOf as cpuMs } from './lib/procs.mjs';
import { opt, startDaemon, startMock } from './lib/bench-daemon.mjs';

const LINES = opt('lines', 2000);
const LATENCY = opt('latency', 0);
const CONCURRENCY = (process.argv.includes('--concurrency') ? process.argv[process.argv.indexOf('--concurrency') + 1] : '1,8,32').split(',').map(Number);

const MOCK = `
import { createServer } from 'node:http';
const body = JSON.stringify({ id: 'chatcmpl-bench', object: 'chat.completion', created: 1, model: 'gpt-4o-mini',
  choices: [{ index: 0, message: { role: 'assistant', content: 'A short answer from the canned upstream.' }, finish_reason: 'stop' }],
  usage: { prompt_tokens: 12, completion_tokens: 9, total_tokens: 21 } });
const server = createServer((req, res) => {
  req.resume();
  req.on('end', () => setTimeout(() => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(body);
  }, ${LATENCY}));
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => process.send({ port: server.address().port }));
`;

const line = (i) => ({ custom_id: `l-${i}`, method: 'POST', url: '/v1/chat/completions', body: { model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: `Question number ${i}: what is the answer?` }] } });

async function runBatch(daemon, key) {
  const form = new FormData();
  form.append('purpose', 'batch');
  form.append('file', new Blob([`${Array.from({ length: LINES }, (_, i) => JSON.stringify(line(i))).join('\n')}\n`]), 'bench.jsonl');
  const auth = { authorization: `Bearer ${key}` };
  const file = await (await fetch(`${daemon.url}/v1/files`, { method: 'POST', body: form, headers: auth })).json();
  const t0 = performance.now();
  const batch = await (
    await fetch(`${daemon.url}/v1/batches`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json' },
      body: JSON.stringify({ input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h' }),
    })
  ).json();
  for (;;) {
    const b = await (await fetch(`${daemon.url}/v1/batches/${batch.id}`, { headers: auth })).json();
    if (['completed', 'failed', 'expired', 'cancelled'].includes(b.status)) {
      return { secs: (performance.now() - t0) / 1000, ok: b.request_counts.completed, failed: b.request_counts.failed };
    }
    await new Promise((r) => setTimeout(r, 20));
  }
}

async function runClient(daemon, key, concurrency) {
  const pool = new Pool(daemon.url, { connections: concurrency, pipelining: 1 });
  const headers = { 'content-type': 'application/json', authorization: `Bearer ${key}` };
  let next = 0;
  let ok = 0;
  let failed = 0;
  const t0 = performance.now();
  const worker = async () => {
    while (next < LINES) {
      const i = next++;
      const r = await pool.request({ method: 'POST', path: '/v1/chat/completions', headers, body: JSON.stringify(line(i).body) });
      await r.body.text();
      if (r.statusCode === 200) ok++;
      else failed++;
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  const secs = (performance.now() - t0) / 1000;
  await pool.close();
  return { secs, ok, failed };
}

const mock = await startMock(MOCK);
const daemon = await startDaemon({ name: 'batch' });
try {
  const { key } = await daemon.manage('POST', '/api/keys', { name: 'bench', scopes: ['proxy'] });
  await daemon.manage('POST', '/api/providers', { provider: 'openai', apiKey: 'sk-bench', providerSpecificData: { baseUrl: `http://127.0.0.1:${mock.port}/v1` } });
  await runClient(daemon, key, 8); // warm-up (JIT, connections)
  const rows = [];
  for (const c of CONCURRENCY) {
    await daemon.manage('PATCH', '/api/settings', { batchConcurrency: c });
    const totals = { batch: { secs: 0, ok: 0, failed: 0, cpu: 0 }, client: { secs: 0, ok: 0, failed: 0, cpu: 0 } };
    for (let round = 0; round < 2; round++) {
      const order = round % 2 ? ['client', 'batch'] : ['batch', 'client'];
      for (const what of order) {
        const before = cpuMs(daemon.pid);
        const r = what === 'batch' ? await runBatch(daemon, key) : await runClient(daemon, key, c);
        const after = cpuMs(daemon.pid);
        const t = totals[what];
        t.secs += r.secs;
        t.ok += r.ok;
        t.failed += r.failed;
        if (before != null && after != null) t.cpu += after - before;
      }
    }
    for (const [what, t] of Object.entries(totals)) rows.push({ c, what, rate: t.ok / t.secs, cpu: t.cpu ? t.cpu / t.ok : null, failed: t.failed });
  }
  console.log(`batch of ${LINES} chat lines (local mode) vs the same requests from a client, upstream latency ${LATENCY} ms, two rounds each`);
  console.log('batchConcurrency / client connections | via | lines or req per s | router CPU ms per line | failed');
  for (const r of rows) console.log(`${r.c} | ${r.what === 'batch' ? 'batch (POST /v1/batches)' : 'client (POST /v1/chat/completions)'} | ${r.rate.toFixed(0)} | ${r.cpu == null ? '-' : r.cpu.toFixed(3)} | ${r.failed}`);
} finally {
  await daemon.stop();
  mock.stop();
}
