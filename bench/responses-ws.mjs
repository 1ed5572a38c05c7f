#!/usr/bin/env node
// The Responses API over router's WebSocket (`GET /v1/responses`, Upgrade: websocket) against the same over
// HTTP SSE (`POST /v1/responses`, stream: true), both through the real daemon (dist/) to one canned OpenAI
// Responses upstream. Not a test.
//
//   npx tsc -p tsconfig.json && node bench/responses-ws.mjs [--seconds 12] [--rounds 4] [--connections 8] [--deltas 20]
//
// The upstream streams a Responses event sequence (created, in_progress, output item and part, `--deltas`
// text deltas, the done events, completed with usage) as fast as it can. Each of `--connections` clients
// runs a closed loop: SSE clients one POST after another on a keep-alive undici Pool, WebSocket clients one
// `response.create` after another on one socket each. Figures: responses/s, first-event latency (request
// sent -> first SSE event or first frame), whole-response time, and router's CPU time per response (Linux
// /proc), the steadier figure on a shared machine. Transports are driven in alternating slices.
import { Pool, WebSocket } from 'undici';
import { cpuMsOf as cpuMs } from './lib/procs.mjs';
import { opt, startDaemon, startMock } from './lib/bench-daemon.mjs';

const SECONDS = opt('seconds', 12);
const ROUNDS = opt('rounds', 4);
const CONNECTIONS = opt('connections', 8);
const DELTAS = opt('deltas', 20);

const MOCK = `
import { createServer } from 'node:http';
const n = ${DELTAS};
const text = Array.from({ length: n }, (_, i) => 'word' + i + ' ').join('');
const item = { id: 'msg_bench', type: 'message', status: 'in_progress', role: 'assistant', content: [] };
const part = { type: 'output_text', text: '', annotations: [] };
const done = { ...item, status: 'completed', content: [{ ...part, text }] };
const response = (status, output, usage) => ({ id: 'resp_bench', object: 'response', created_at: 1, status, model: 'gpt-bench', output, usage });
const events = [
  { type: 'response.created', response: response('in_progress', [], null) },
  { type: 'response.in_progress', response: response('in_progress', [], null) },
  { type: 'response.output_item.added', output_index: 0, item },
  { type: 'response.content_part.added', item_id: 'msg_bench', output_index: 0, content_index: 0, part },
  ...Array.from({ length: n }, (_, i) => ({ type: 'response.output_text.delta', item_id: 'msg_bench', output_index: 0, content_index: 0, delta: 'word' + i + ' ' })),
  { type: 'response.output_text.done', item_id: 'msg_bench', output_index: 0, content_index: 0, text },
  { type: 'response.content_part.done', item_id: 'msg_bench', output_index: 0, content_index: 0, part: { ...part, text } },
  { type: 'response.output_item.done', output_index: 0, item: done },
  { type: 'response.completed', response: response('completed', [done], { input_tokens: 12, output_tokens: n, total_tokens: 12 + n }) },
];
const sse = events.map((e, i) => 'event: ' + e.type + '\\ndata: ' + JSON.stringify({ ...e, sequence_number: i }) + '\\n\\n');
const server = createServer((req, res) => {
  req.resume();
  req.on('end', () => {
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    for (const chunk of sse) res.write(chunk);
    res.end();
  });
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => process.send({ port: server.address().port }));
`;

const request = { model: 'openai/gpt-bench', input: 'Say something short.' };

async function driveSse(url, key, seconds) {
  const pool = new Pool(url, { connections: CONNECTIONS, pipelining: 1 });
  const headers = { 'content-type': 'application/json', authorization: `Bearer ${key}` };
  const body = JSON.stringify({ ...request, stream: true });
  const until = performance.now() + seconds * 1000;
  const r = { ok: 0, failed: 0, first: [], total: [] };
  const worker = async () => {
    while (performance.now() < until) {
      const t = performance.now();
      try {
        const res = await pool.request({ method: 'POST', path: '/v1/responses', headers, body });
        let first = 0;
        let all = '';
        for await (const chunk of res.body) {
          if (!first) first = performance.now() - t;
          all += chunk;
        }
        if (res.statusCode === 200 && all.includes('response.completed')) {
          r.ok++;
          r.first.push(first);
          r.total.push(performance.now() - t);
        } else r.failed++;
      } catch {
        r.failed++;
      }
    }
  };
  const t0 = performance.now();
  await Promise.all(Array.from({ length: CONNECTIONS }, worker));
  r.secs = (performance.now() - t0) / 1000;
  await pool.close();
  return r;
}

function openSocket(url, key) {
  const ws = new WebSocket(`${url.replace('http', 'ws')}/v1/responses`, { headers: { authorization: `Bearer ${key}` } });
  let onFrame;
  ws.addEventListener('message', (e) => onFrame?.(String(e.data)));
  return new Promise((resolve, reject) => {
    ws.addEventListener('open', () => resolve({ ws, set: (fn) => (onFrame = fn) }));
    ws.addEventListener('error', () => reject(new Error('websocket error')));
  });
}

async function driveWs(sockets, seconds) {
  const until = performance.now() + seconds * 1000;
  const r = { ok: 0, failed: 0, first: [], total: [] };
  const frame = JSON.stringify({ type: 'response.create', ...request });
  const worker = async (s) => {
    while (performance.now() < until) {
      const t = performance.now();
      let first = 0;
      const end = await new Promise((resolve) => {
        s.set((data) => {
          if (!first) first = performance.now() - t;
          if (data.includes('"type":"response.completed"')) resolve(true);
          else if (data.includes('"type":"response.failed"')) resolve(false);
        });
        s.ws.send(frame);
      });
      if (end) {
        r.ok++;
        r.first.push(first);
        r.total.push(performance.now() - t);
      } else r.failed++;
    }
  };
  const t0 = performance.now();
  await Promise.all(sockets.map(worker));
  r.secs = (performance.now() - t0) / 1000;
  return r;
}

const pct = (xs, p) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] ?? 0;
};

const mock = await startMock(MOCK);
const daemon = await startDaemon({ name: 'responses-ws' });
try {
  const { key } = await daemon.manage('POST', '/api/keys', { name: 'bench', scopes: ['proxy'] });
  await daemon.manage('POST', '/api/providers', { provider: 'openai', apiKey: 'sk-bench', providerSpecificData: { baseUrl: `http://127.0.0.1:${mock.port}/v1` } });
  const sockets = await Promise.all(Array.from({ length: CONNECTIONS }, () => openSocket(daemon.url, key)));
  const drivers = { 'HTTP SSE (POST /v1/responses)': (s) => driveSse(daemon.url, key, s), 'WebSocket (GET /v1/responses)': (s) => driveWs(sockets, s) };
  for (const d of Object.values(drivers)) await d(2); // warm-up
  const totals = Object.fromEntries(Object.keys(drivers).map((k) => [k, { ok: 0, failed: 0, secs: 0, cpu: 0, first: [], total: [] }]));
  const slice = SECONDS / ROUNDS;
  for (let round = 0; round < ROUNDS; round++) {
    const order = Object.keys(drivers);
    if (round % 2) order.reverse();
    for (const name of order) {
      const before = cpuMs(daemon.pid);
      const r = await drivers[name](slice);
      const after = cpuMs(daemon.pid);
      const t = totals[name];
      t.ok += r.ok;
      t.failed += r.failed;
      t.secs += r.secs;
      t.first.push(...r.first);
      t.total.push(...r.total);
      if (before != null && after != null) t.cpu += after - before;
    }
  }
  for (const s of sockets) s.ws.close();
  console.log(`Responses through router, ${DELTAS} text deltas per response, ${CONNECTIONS} clients, ${SECONDS}s per transport in ${ROUNDS} alternating slices`);
  console.log('transport | responses/s | first event p50 ms | first event p99 ms | whole response p50 ms | router CPU ms/response | failed');
  for (const [name, t] of Object.entries(totals)) {
    const cpu = t.cpu && t.ok ? (t.cpu / t.ok).toFixed(3) : '-';
    console.log(`${name} | ${(t.ok / t.secs).toFixed(0)} | ${pct(t.first, 50).toFixed(2)} | ${pct(t.first, 99).toFixed(2)} | ${pct(t.total, 50).toFixed(2)} | ${cpu} | ${t.failed}`);
  }
} finally {
  await daemon.stop();
  mock.stop();
}
