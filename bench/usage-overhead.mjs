#!/usr/bin/env node
// Usage-recording overhead: req/s of the real daemon (dist/) with usage recording on, against the same
// build with the queue disabled (ROUTER_USAGE_DISABLED=1 read at boot). Not a test.
//
//   npx tsc -p tsconfig.json && node bench/usage-overhead.mjs [--seconds 12] [--rounds 6] [--connections 16] [--stream]
//     [--prefill N] [--cpu-prof DIR] [--durability reply [--against-batched]]
//
// Starts one daemon per mode side by side on temp homes, each with an OpenAI connection pointed at a
// canned mock upstream (its own process), warms both up, then drives POST /v1/chat/completions with an
// undici Pool in alternating slices (`--rounds` pairs sharing `--seconds` per mode), so both modes see the
// same background load. Prints req/s per mode and (Linux) the daemon's CPU time per request, which is the
// steadier figure on a shared machine: throughput there mostly measures the neighbours.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { randomUUID } from 'node:crypto';
import { Pool } from 'undici';
import { DAEMON_NODE_FLAGS, opt, startDaemon, startMock } from './lib/bench-daemon.mjs';

const args = process.argv.slice(2);
const SECONDS = opt('seconds', 12);
const CONNECTIONS = opt('connections', 16);
const ROUNDS = opt('rounds', 6);
const STREAM = args.includes('--stream');
// --prefill N: the "on" daemon's usage_log holds N older rows before the run (a daemon that has been in
// use: index pages no longer fit in SQLite's page cache, as with 30 days of traffic). Default 0: empty.
const PREFILL = opt('prefill', 0);
// --cpu-prof DIR: both daemons write V8 CPU profiles (one per thread) to DIR/off and DIR/on on stop (summarize with bench/profile-summary.mjs).
const PROF_DIR = args.includes('--cpu-prof') ? args[args.indexOf('--cpu-prof') + 1] : undefined;
// --durability reply: the "on" daemon runs with usageDurability 'reply' (each reply waits for its row's
// commit and fsync). --against-batched: the "off" daemon records usage too, with the default 'batched', so
// the difference is the cost of durable replies alone.
const DURABILITY = args.includes('--durability') ? args[args.indexOf('--durability') + 1] : undefined;
const AGAINST_BATCHED = args.includes('--against-batched');

// A canned upstream in its own process: Chat Completions JSON (or SSE with usage) for every POST.
const MOCK = `
import { createServer } from 'node:http';
const json = JSON.stringify({ id: 'chatcmpl-bench', object: 'chat.completion', created: 1, model: 'gpt-4o',
  choices: [{ index: 0, message: { role: 'assistant', content: 'Hello from the bench upstream.' }, finish_reason: 'stop' }],
  usage: { prompt_tokens: 42, completion_tokens: 8, total_tokens: 50 } });
const chunk = (o) => 'data: ' + JSON.stringify(o) + '\\n\\n';
const base = { id: 'chatcmpl-bench', object: 'chat.completion.chunk', created: 1, model: 'gpt-4o' };
const sse = chunk({ ...base, choices: [{ index: 0, delta: { role: 'assistant', content: 'Hello' }, finish_reason: null }] })
  + chunk({ ...base, choices: [{ index: 0, delta: { content: ' there.' }, finish_reason: 'stop' }] })
  + chunk({ ...base, choices: [], usage: { prompt_tokens: 42, completion_tokens: 8, total_tokens: 50 } }) + 'data: [DONE]\\n\\n';
const server = createServer((req, res) => {
  let body = '';
  req.on('data', (c) => (body += c));
  req.on('end', () => {
    if (body.includes('"stream":true')) { res.writeHead(200, { 'content-type': 'text/event-stream' }); res.end(sse); }
    else { res.writeHead(200, { 'content-type': 'application/json' }); res.end(json); }
  });
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => process.send({ port: server.address().port }));
`;

function startRouter(disabled) {
  const env = { ...process.env };
  if (disabled && !AGAINST_BATCHED) env.ROUTER_USAGE_DISABLED = '1';
  else delete env.ROUTER_USAGE_DISABLED;
  const execArgv = [...DAEMON_NODE_FLAGS, ...(PROF_DIR ? ['--cpu-prof', '--cpu-prof-dir', join(PROF_DIR, disabled ? 'off' : 'on')] : [])];
  return startDaemon({ name: 'usage', env, execArgv });
}

async function drive(url, key, seconds) {
  const pool = new Pool(url, { connections: CONNECTIONS, pipelining: 1 });
  const body = JSON.stringify({
    model: 'openai/gpt-4o',
    messages: [{ role: 'user', content: 'Say hello to the benchmark.' }],
    ...(STREAM ? { stream: true, stream_options: { include_usage: true } } : {}),
  });
  const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
  const until = performance.now() + seconds * 1000;
  let ok = 0;
  let failed = 0;
  const latencies = [];
  const worker = async () => {
    while (performance.now() < until) {
      try {
        const t = performance.now();
        const r = await pool.request({ method: 'POST', path: '/v1/chat/completions', headers, body });
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
  return { rps: ok / elapsed, ok, failed, latencies };
}

/** Starts a daemon in one mode with a key and an OpenAI connection pointed at the mock. */
async function prepare(mock, disabled) {
  const d = await startRouter(disabled);
  const { key } = await d.manage('POST', '/api/keys', { name: 'bench', scopes: ['proxy'] });
  await d.manage('POST', '/api/providers', { provider: 'openai', apiKey: 'sk-bench', providerSpecificData: { baseUrl: `http://127.0.0.1:${mock.port}/v1` } });
  if (!disabled && PREFILL > 0) prefill(join(d.home, 'router.db'), PREFILL);
  if (!disabled && DURABILITY) await d.manage('PATCH', '/api/settings', { usageDurability: DURABILITY });
  return { d, key };
}

/** Inserts `n` rows like the bench's own (random trace ids, the last days) through a second connection. */
function prefill(file, n) {
  const db = new Database(file);
  db.pragma('busy_timeout = 10000');
  const insert = db.prepare(
    `INSERT INTO usage_log (ts, trace_id, api_key_id, endpoint, client_format, provider, model, requested_model, connection_id,
       status, latency_ms, upstream_ms, tokens_in, tokens_out, cost_usd, finish_reason)
     VALUES (?, ?, NULL, '/v1/chat/completions', 'openai-chat', 'openai', 'gpt-4o', 'openai/gpt-4o', NULL, 200, 12.5, 3.5, 42, 8, 0.000185, 'stop')`,
  );
  const t0 = Date.now() - 7 * 86_400_000;
  const step = (7 * 86_400_000) / n;
  const fill = db.transaction((from, to) => {
    for (let i = from; i < to; i++) insert.run(Math.floor(t0 + i * step), randomUUID());
  });
  for (let i = 0; i < n; i += 20_000) fill(i, Math.min(n, i + 20_000));
  db.pragma('wal_checkpoint(TRUNCATE)');
  db.close();
}

/**
 * CPU time (user + system) in ms from /proc, of the whole process (every thread: the usage writer worker,
 * V8's GC helpers, libuv's pool) or, with `mainThread`, of its main thread only; undefined elsewhere.
 */
function cpuMs(pid, mainThread = false) {
  try {
    const fields = readFileSync(mainThread ? `/proc/${pid}/task/${pid}/stat` : `/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100; // utime, stime in clock ticks (100 Hz)
  } catch {
    return undefined;
  }
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)];

const mock = await startMock(MOCK);
// Both daemons run side by side and are driven in alternating slices, so both modes see the same
// background load (a shared machine changes speed from one second to the next).
const modes = { off: await prepare(mock, true), on: await prepare(mock, false) };
const totals = { off: { ok: 0, failed: 0, secs: 0, cpu: 0, main: 0, lat: [] }, on: { ok: 0, failed: 0, secs: 0, cpu: 0, main: 0, lat: [] } };
const perRound = { off: [], on: [] };
try {
  for (const m of ['off', 'on']) await drive(modes[m].d.url, modes[m].key, Math.min(3, SECONDS)); // warm-up
  const slice = SECONDS / ROUNDS;
  for (let round = 1; round <= ROUNDS * 2; round++) {
    for (const m of round % 2 ? ['off', 'on'] : ['on', 'off']) {
      const { d, key } = modes[m];
      const cpu0 = cpuMs(d.pid);
      const main0 = cpuMs(d.pid, true);
      const r = await drive(d.url, key, slice);
      // Let the once-a-second flush of this slice's rows land inside the measurement.
      await new Promise((res) => setTimeout(res, 1100));
      const cpu1 = cpuMs(d.pid);
      const main1 = cpuMs(d.pid, true);
      const t = totals[m];
      t.ok += r.ok;
      t.failed += r.failed;
      t.secs += slice;
      for (const l of r.latencies) t.lat.push(l);
      if (cpu0 !== undefined && cpu1 !== undefined) t.cpu += cpu1 - cpu0;
      if (main0 !== undefined && main1 !== undefined) t.main += main1 - main0;
      perRound[m].push(r.rps);
    }
  }
  const s = await modes.on.d.manage('GET', '/api/usage/summary');
  console.log(`usage rows written by the "on" daemon: ${s.requests - PREFILL} (${s.estimated} estimated)${PREFILL ? `, after ${PREFILL} prefilled` : ''}`);
} finally {
  await Promise.all(Object.values(modes).map((m) => m.d.stop()));
  mock.stop();
}
console.log(`${STREAM ? 'streamed' : 'non-streamed'} chat, ${CONNECTIONS} connections, ${SECONDS * 2}s per mode in ${ROUNDS * 2} alternating slices`);
const pct = (xs, p) => {
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))] : NaN;
};
const label = {
  off: AGAINST_BATCHED ? ' (usageDurability batched)' : ' (ROUTER_USAGE_DISABLED=1)',
  on: DURABILITY ? ` (usageDurability ${DURABILITY})`.padEnd(26) : ''.padEnd(26),
};
for (const m of ['off', 'on']) {
  const t = totals[m];
  console.log(
    `usage ${m.padEnd(3)}${label[m]}: ${(t.ok / t.secs).toFixed(0).padStart(5)} req/s (median slice ${median(perRound[m]).toFixed(0)}), ` +
      `${t.cpu ? ((t.cpu * 1000) / t.ok).toFixed(0) : '?'} us daemon CPU per request (main thread ${t.main ? ((t.main * 1000) / t.ok).toFixed(0) : '?'}), ` +
      `latency p50 ${pct(t.lat, 50).toFixed(1)} ms p99 ${pct(t.lat, 99).toFixed(1)} ms, ${t.failed} failed`,
  );
}
const rOff = totals.off.ok / totals.off.secs;
const rOn = totals.on.ok / totals.on.secs;
console.log(`throughput difference: ${(((rOn - rOff) / rOff) * 100).toFixed(1)}%`);
if (totals.off.cpu && totals.on.cpu) {
  const cOff = (totals.off.cpu * 1000) / totals.off.ok;
  const cOn = (totals.on.cpu * 1000) / totals.on.ok;
  console.log(`CPU per request difference: ${(cOn - cOff).toFixed(0)} us (${(((cOn - cOff) / cOff) * 100).toFixed(1)}%)`);
}
if (totals.off.main && totals.on.main) {
  const mOff = (totals.off.main * 1000) / totals.off.ok;
  const mOn = (totals.on.main * 1000) / totals.on.ok;
  console.log(`main-thread CPU per request difference: ${(mOn - mOff).toFixed(0)} us (${(((mOn - mOff) / mOff) * 100).toFixed(1)}%)`);
}
