#!/usr/bin/env node
// Benchmark harness (issue 9). `npm run bench` (full, a few minutes) or `npm run bench -- --quick` (~1 min).
//
// Starts, each in its own process, all on loopback: a mock upstream (canned OpenAI/Anthropic JSON and SSE),
// a bare pass-through proxy (the ceiling for any Node proxy here), the real router daemon from dist/ on a
// temp home and port 0 (with a measuring probe preloaded), and an undici load generator. Then runs the
// scenarios of issue 9, prints a Markdown table, writes bench/results/<time>-<mode>.json and refreshes the
// table in docs/performance.md.
//
// Options:
//   --quick            short phases (~1 minute in all)
//   --only a,b,...     run only these scenarios (docs are not updated)
//   --profile a,c      CPU-profile the router during the loaded phase of these scenarios
//                      (bench/profiles/<scenario>.cpuprofile + a printed summary)
//   --scale X          multiply every phase duration by X (quick development runs: --quick --scale 0.5)
//   --no-save          do not write bench/results/*.json
//   --no-docs          do not touch docs/performance.md
//   --router-root DIR  run the router from another checkout/build (its dist/ and bin/), e.g. to compare a fix
//   --compare REF      the request-path guard instead of the scenarios: this build against git REF's, CPU per
//                      request and RSS in both orders (bench/guard.mjs; docs/performance.md "Request-path guard")
//   --cluster N        the cluster bench instead: one node vs N nodes on PostgreSQL + Redis (bench/cluster.mjs)
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { execFileSync } from 'node:child_process';
import { ask, cpuMeter, freePort, median, rssOf, sleep, spawnNode, timed } from './lib/procs.mjs';
import { fmt, ratio, renderTable, updateDocs } from './lib/report.mjs';
import { summarize } from './profile-summary.mjs';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
if (process.argv.includes('--compare')) {
  const { spawnSync } = await import('node:child_process');
  const guard = spawnSync(process.execPath, [join(ROOT, 'bench/guard.mjs'), ...process.argv.slice(2)], { stdio: 'inherit' });
  process.exit(guard.status ?? 1);
}
if (process.argv.includes('--cluster')) {
  // One node vs a cluster on PostgreSQL + Redis (bench/cluster.mjs; docs/performance.md "Cluster mode").
  const { spawnSync } = await import('node:child_process');
  const cluster = spawnSync(process.execPath, [join(ROOT, 'bench/cluster.mjs'), ...process.argv.slice(2)], { stdio: 'inherit' });
  process.exit(cluster.status ?? 1);
}
const LIB = join(ROOT, 'bench/lib');
const ALL = ['a', 'b', 'c', 'd', 'e', 'f'];

// ---------------------------------------------------------------------------------------------- options

function parseArgs(argv) {
  const o = { quick: false, only: ALL, profile: [], scale: 1, save: true, docs: true, partial: false };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--quick') o.quick = true;
    else if (a === '--only') {
      o.only = argv[++i].split(',').map((s) => s.trim().toLowerCase());
      o.partial = true;
    } else if (a === '--profile') o.profile = argv[++i].split(',').map((s) => s.trim().toLowerCase());
    else if (a === '--scale') o.scale = Number(argv[++i]);
    else if (a === '--no-save') o.save = false;
    else if (a === '--no-docs') o.docs = false;
    else if (a === '--router-root') {
      o.routerRoot = argv[++i];
      o.partial = true;
    }
    else if (a === '--help' || a === '-h') {
      process.stdout.write(readFileSync(fileURLToPath(import.meta.url), 'utf8').split('\n').slice(1, 19).map((l) => l.replace(/^\/\/ ?/, '')).join('\n') + '\n');
      process.exit(0);
    } else throw new Error(`unknown option ${a} (see --help)`);
  }
  if (o.scale !== 1) o.partial = true;
  return o;
}

const opts = parseArgs(process.argv.slice(2));
const RROOT = opts.routerRoot ?? ROOT;
const ENTRY = join(RROOT, 'dist/daemon/entry.js');
// The daemon's own Node flags (as `router start` uses them); older builds have none.
const { DAEMON_NODE_FLAGS, DAEMON_ENV } = await import(pathToFileURL(join(RROOT, 'dist/shared/daemon-flags.js')).href).then(
  (m) => ({ DAEMON_NODE_FLAGS: m.DAEMON_NODE_FLAGS ?? [], DAEMON_ENV: m.daemonEnv ? m.daemonEnv() : {} }),
  () => ({ DAEMON_NODE_FLAGS: [], DAEMON_ENV: {} }),
);
const CLI = join(RROOT, 'bin/router.js');
const S = (ms) => Math.max(300, Math.round(ms * opts.scale));
const D = opts.quick
  ? { warm: S(700), thr: S(2500), rate: S(2000), ttfb: S(1500), chunk: S(2500), hold: S(2500), openTimeout: S(3000), rounds: 1, starts: 2, statuses: 3, warmup: S(800) }
  : { warm: S(2000), thr: S(8000), rate: S(8000), ttfb: S(6000), chunk: S(8000), hold: S(10000), openTimeout: S(10000), rounds: 2, starts: 5, statuses: 10, warmup: S(3000) };
const CONF = {
  connections: 32, // closed-loop concurrency for max-throughput phases
  rateRps: 500, // the "fixed moderate rate" of scenario a/d latency
  ttfbRate: 100, // streams per second while measuring first byte
  streamConnections: 16, // concurrent streams for chunk-rate phases
  chunks: 50,
  openStreams: 1000,
  openStreamModel: 'gpt-bench-c100-d200', // 100 chunks, one every 200 ms: 20 s streams, 5k chunks/s at 1,000 streams
  comboModels: ['openai/a', 'openai/b', 'openai/c'],
  failModels: ['a'],
};

const log = (msg) => process.stderr.write(`[bench] ${msg}\n`);
const r3 = (x) => (typeof x === 'number' ? Math.round(x * 1000) / 1000 : x);

// ---------------------------------------------------------------------------------------------- processes

const procs = [];
function track(p) {
  procs.push(p);
  return p;
}
let routerHandle;
let routerUrl;
let routerCliToken;

async function stopAll() {
  if (routerHandle && routerHandle.child.exitCode === null) {
    await manage('POST', '/api/system/shutdown').catch(() => {});
    const exited = new Promise((r) => routerHandle.child.once('exit', r));
    await Promise.race([exited, sleep(5000)]);
  }
  for (const p of procs) if (p.child.exitCode === null && p.child.signalCode === null) p.child.kill('SIGTERM');
}
for (const sig of ['SIGINT', 'SIGTERM']) {
  process.once(sig, () => {
    log(`${sig}: stopping child processes`);
    stopAll().finally(() => process.exit(130));
  });
}

async function manage(method, path, body) {
  const res = await fetch(`${routerUrl}${path}`, {
    method,
    headers: { 'x-router-cli-token': routerCliToken, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  let json;
  try {
    json = text ? JSON.parse(text) : undefined;
  } catch {
    json = text;
  }
  return { status: res.status, json };
}

// ---------------------------------------------------------------------------------------------- requests

const OPENAI_SDK_HEADERS = {
  'content-type': 'application/json',
  accept: 'application/json',
  'user-agent': 'OpenAI/JS 6.49.0',
  'x-stainless-lang': 'js',
  'x-stainless-package-version': '6.49.0',
  'x-stainless-os': 'Linux',
  'x-stainless-arch': 'x64',
  'x-stainless-runtime': 'node',
  'x-stainless-runtime-version': process.version,
  'x-stainless-retry-count': '0',
};
const ANTHROPIC_SDK_HEADERS = {
  'content-type': 'application/json',
  accept: 'application/json',
  'anthropic-version': '2023-06-01',
  'user-agent': 'Anthropic/JS 1.12.0',
  'x-stainless-lang': 'js',
  'x-stainless-runtime': 'node',
};

/** An OpenAI Chat Completions request, as the OpenAI SDK sends it, to one of the targets. */
function openaiReq(target, { stream = false, model = 'gpt-bench' } = {}) {
  const body = { model: target.prefix + model, messages: [{ role: 'user', content: 'Say hello in one short sentence.' }], max_tokens: 32 };
  if (stream) body.stream = true;
  return {
    origin: target.origin,
    path: '/v1/chat/completions',
    headers: { ...OPENAI_SDK_HEADERS, ...(stream ? { accept: 'text/event-stream' } : {}), authorization: `Bearer ${target.key}` },
    body: JSON.stringify(body),
  };
}

/** An Anthropic Messages streaming request, as the Anthropic SDK sends it. */
function anthropicReq(target, { model = 'gpt-bench' } = {}) {
  const body = { model: target.prefix + model, max_tokens: 32, stream: true, messages: [{ role: 'user', content: 'Say hello in one short sentence.' }] };
  return { origin: target.origin, path: '/v1/messages', headers: { ...ANTHROPIC_SDK_HEADERS, accept: 'text/event-stream', 'x-api-key': target.key }, body: JSON.stringify(body) };
}

/** One request through fetch, to check a path works before it is measured. */
async function check(req, mustInclude) {
  const res = await fetch(`${req.origin}${req.path}`, { method: 'POST', headers: req.headers, body: req.body });
  const text = await res.text();
  if (res.status !== 200 || !text.includes(mustInclude)) {
    throw new Error(`sanity check failed for ${req.origin}${req.path}: HTTP ${res.status} ${text.slice(0, 300)}`);
  }
  return text;
}

// ---------------------------------------------------------------------------------------------- measuring

let loadgen;
let pids;
let probe;

function loadErr(r, what) {
  if (r.stalled > 0) log(`  ${what}: ${r.stalled} streams STALLED (still open 3 s after the phase; aborted)`);
  if (r.errors > 0) log(`  ${what}: ${r.errors} errors (last: ${r.lastError})`);
  return r.errors > Math.max(5, 0.01 * (r.ok ?? 0));
}

/** Closed-loop max throughput; CPU per request of the proxy process; router event-loop delay. */
async function throughput(name, req, { connections = CONF.connections, durationMs = D.thr, proc, profile } = {}) {
  if (name === 'router') await probe({ bench: 'reset' });
  if (name === 'router') await probe({ bench: 'syncio', on: true });
  if (profile) await probe({ bench: 'profile-start', intervalUs: 250 });
  const meter = cpuMeter(pids);
  const r = await ask(loadgen, { kind: 'throughput', ...req, connections, warmupMs: D.warm, durationMs });
  const cpu = meter();
  if (profile) await probe({ bench: 'profile-stop', file: profile });
  r.cpu = cpu;
  const p = proc ?? name;
  if (cpu[`${p}CpuMs`] !== undefined && r.all) r.proxyCpuUsPerReq = Math.round((cpu[`${p}CpuMs`] * 1000) / r.all);
  // Load-independent view: CPU per request of every process on the path, and the throughput that implies
  // on this machine's cores if nothing else ran (the phase's own figure depends on what others are doing).
  if (r.all) {
    const per = (k) => (cpu[`${k}CpuMs`] !== undefined ? (cpu[`${k}CpuMs`] * 1000) / r.all : 0);
    const sum = per('loadgen') + per('upstream') + (name === 'direct' ? 0 : per(p));
    r.pathCpuUsPerReq = Math.round(sum);
    r.idleMachineRpsEstimate = sum ? Math.round((os.cpus().length * 1e6) / sum) : null;
  }
  if (name === 'router') {
    r.routerEld = (await probe({ bench: 'stats' })).eld;
    const { calls, transactions } = await probe({ bench: 'syncio', on: false });
    const total = Object.values(calls).reduce((n, c) => n + c.count, 0);
    r.syncIo = { callsPerRequest: r.all ? Math.round((total / r.all) * 10000) / 10000 : null, total, calls, transactions };
    if (transactions.count) log(`  sqlite transactions on the event loop: ${transactions.count}, p50 ${transactions.p50Ms} ms, max ${transactions.maxMs} ms, total ${transactions.totalMs} ms`);
    if (total) log(`  sync disk calls during the phase: ${total} (${r.syncIo.callsPerRequest} per request): ${Object.entries(calls).map(([k, v]) => `${k} x${v.count} at ${Object.keys(v.sites)[0]}`).join('; ')}`);
  }
  r.invalid = loadErr(r, `${name} throughput`);
  log(`  ${name.padEnd(9)} ${String(r.rps).padStart(6)} req/s  p50 ${fmt(r.latencyMs.p50)} ms  proxy cpu/req ${r.proxyCpuUsPerReq ?? '-'} µs  path cpu/req ${r.pathCpuUsPerReq ?? '-'} µs (idle-machine est. ${r.idleMachineRpsEstimate ?? '-'} req/s)  other load ${cpu.otherCores ?? '-'} cores`);
  return r;
}

/** Open-loop fixed rate; latency (and first byte for streams) from the dispatch call. */
async function atRate(name, req, { rate = CONF.rateRps, durationMs = D.rate, connections = CONF.connections } = {}) {
  const meter = cpuMeter(pids);
  const r = await ask(loadgen, { kind: 'rate', ...req, rate, connections, warmupMs: Math.min(1000, D.warm), durationMs });
  r.cpu = meter();
  r.invalid = loadErr(r, `${name} @${rate}/s`);
  log(
    `  ${name.padEnd(9)} @${rate}/s  p50 ${fmt(r.latencyMs.p50)} p99 ${fmt(r.latencyMs.p99)} ms` +
      (req.stream ? `  first byte p50 ${fmt(r.firstByteMs.p50)} p99 ${fmt(r.firstByteMs.p99)} ms` : '') +
      `  (lag ${r.schedulerMaxLagMs} ms, other load ${r.cpu.otherCores ?? '-'} cores)`,
  );
  return r;
}

/** Runs `fn(name)` for each name, alternating over rounds; returns the run with the median `key` per name. */
async function rounds(names, fn, key) {
  const runs = Object.fromEntries(names.map((n) => [n, []]));
  for (let i = 0; i < D.rounds; i++) for (const n of names) runs[n].push(await fn(n, i));
  const out = {};
  for (const n of names) {
    const sorted = [...runs[n]].sort((x, y) => key(x) - key(y));
    out[n] = { ...sorted[Math.floor((sorted.length - 1) / 2)], rounds: runs[n].map(key) };
  }
  return out;
}

const added = (x, base) => (typeof x === 'number' && typeof base === 'number' ? x - base : null);
const profileFile = (id) => {
  mkdirSync(join(ROOT, 'bench/profiles'), { recursive: true });
  return join(ROOT, 'bench/profiles', `${id}-router.cpuprofile`);
};

// ---------------------------------------------------------------------------------------------- scenarios

/** Streams that never ended (still open 3 s after their phase) over the router's streaming phases. */
function stallRow(id, phases) {
  const stalled = phases.reduce((n, p) => n + (p.stalled ?? 0), 0);
  const total = phases.reduce((n, p) => n + (p.all ?? p.ok ?? 0) + (p.stalled ?? 0), 0);
  results[id].stalled = { stalled, total };
  rows.push({ scenario: id, metric: 'streams that never ended (stalled)', router: `${stalled} of ${total}`, target: '0', met: target(id, 'no stalled streams', stalled, 0) });
}

const results = {};
const rows = [];
const targets = [];
const skipped = {};
function target(id, text, value, limit, op = '<=') {
  const met = typeof value === 'number' ? (op === '<=' ? value <= limit : value >= limit) : undefined;
  targets.push({ id, text, value: r3(value), limit, op, met });
  return met;
}

async function scenarioA(T) {
  log('a. OpenAI SDK -> OpenAI upstream, non-streaming, small body');
  const prof = opts.profile.includes('a') ? profileFile('a') : undefined;
  const thr = await rounds(['baseline', 'router'], (n, i) => throughput(n, openaiReq(T[n]), { profile: n === 'router' && i === 0 ? prof : undefined }), (r) => r.rps);
  const lat = {};
  for (const n of ['direct', 'baseline', 'router']) lat[n] = await atRate(n, openaiReq(T[n]));
  results.a = { throughput: thr, latency: lat };
  const tr = ratio(thr.router.rps, thr.baseline.rps);
  const addP50 = { baseline: added(lat.baseline.latencyMs.p50, lat.direct.latencyMs.p50), router: added(lat.router.latencyMs.p50, lat.direct.latencyMs.p50) };
  const addP99 = { baseline: added(lat.baseline.latencyMs.p99, lat.direct.latencyMs.p99), router: added(lat.router.latencyMs.p99, lat.direct.latencyMs.p99) };
  results.a.summary = { rpsRatio: r3(tr), addedP50: addP50, addedP99: addP99 };
  const m1 = target('a', 'throughput >= 0.8 x baseline', tr, 0.8, '>=');
  const m2 = target('a', 'throughput >= 3,400 req/s', thr.router.rps, 3400, '>=');
  rows.push({ scenario: 'a', metric: 'max throughput, req/s', baseline: thr.baseline.rps, router: thr.router.rps, ratio: tr, target: '>= 0.8x and >= 3,400', met: m1 && m2 });
  rows.push({ scenario: 'a', metric: 'proxy CPU per request, µs', baseline: thr.baseline.proxyCpuUsPerReq, router: thr.router.proxyCpuUsPerReq, ratio: ratio(thr.router.proxyCpuUsPerReq, thr.baseline.proxyCpuUsPerReq) });
  rows.push({
    scenario: 'a',
    metric: 'throughput est. on idle machine, req/s',
    baseline: thr.baseline.idleMachineRpsEstimate,
    router: thr.router.idleMachineRpsEstimate,
    ratio: ratio(thr.router.idleMachineRpsEstimate, thr.baseline.idleMachineRpsEstimate),
  });
  rows.push({ scenario: 'a', metric: `latency p50 @${CONF.rateRps}/s, ms`, direct: lat.direct.latencyMs.p50, baseline: lat.baseline.latencyMs.p50, router: lat.router.latencyMs.p50 });
  const over = thr.router.rps < CONF.rateRps ? ` (router max ${thr.router.rps}/s: overloaded)` : '';
  rows.push({ scenario: 'a', metric: `added p50 @${CONF.rateRps}/s, ms${over}`, baseline: addP50.baseline, router: addP50.router, ratio: ratio(addP50.router, addP50.baseline), target: '<= 0.3 ms', met: target('a', 'added p50 <= 0.3 ms', addP50.router, 0.3) });
  rows.push({ scenario: 'a', metric: `added p99 @${CONF.rateRps}/s, ms${over}`, baseline: addP99.baseline, router: addP99.router, ratio: ratio(addP99.router, addP99.baseline), target: '<= 1.5 ms', met: target('a', 'added p99 <= 1.5 ms', addP99.router, 1.5) });
  const sio = thr.router.syncIo;
  if (sio) {
    const fsCalls = Object.entries(sio.calls).filter(([k]) => k.startsWith('fs.')).reduce((n, [, c]) => n + c.count, 0);
    rows.push({ scenario: 'a', metric: 'sync fs calls per request (router)', router: thr.router.all ? fsCalls / thr.router.all : null, target: '0 on the request path', met: fsCalls === 0 });
    rows.push({
      scenario: 'a',
      metric: 'SQLite statements per request (batched) / largest transaction, ms',
      router: `${fmt(sio.callsPerRequest - (thr.router.all ? fsCalls / thr.router.all : 0))} / ${fmt(sio.transactions?.maxMs ?? 0)}`,
    });
  }
  if (thr.router.routerEld) rows.push({ scenario: 'a', metric: 'router event-loop delay p99 / max at max load, ms', router: `${fmt(thr.router.routerEld.p99)} / ${fmt(thr.router.routerEld.max)}` });
  if (prof) printProfile('a', prof);
}

async function scenarioB(T) {
  log(`b. OpenAI SDK -> OpenAI upstream, streaming (${CONF.chunks} chunks)`);
  const prof = opts.profile.includes('b') ? profileFile('b') : undefined;
  const ttfb = {};
  for (const n of ['direct', 'baseline', 'router']) ttfb[n] = await atRate(n, { ...openaiReq(T[n], { stream: true }), stream: true }, { rate: CONF.ttfbRate, durationMs: D.ttfb });
  const rate = await rounds(
    ['baseline', 'router'],
    (n, i) => throughput(n, openaiReq(T[n], { stream: true }), { connections: CONF.streamConnections, durationMs: D.chunk, profile: n === 'router' && i === 0 ? prof : undefined }),
    (r) => r.rps,
  );
  for (const r of Object.values(rate)) r.chunksPerSec = r.rps * CONF.chunks;
  results.b = { firstByte: ttfb, chunkRate: rate };
  const add = { baseline: added(ttfb.baseline.firstByteMs.p50, ttfb.direct.firstByteMs.p50), router: added(ttfb.router.firstByteMs.p50, ttfb.direct.firstByteMs.p50) };
  results.b.summary = { addedFirstByteP50: add, chunkRatio: r3(ratio(rate.router.chunksPerSec, rate.baseline.chunksPerSec)) };
  rows.push({ scenario: 'b', metric: `first byte p50 @${CONF.ttfbRate} streams/s, ms`, direct: ttfb.direct.firstByteMs.p50, baseline: ttfb.baseline.firstByteMs.p50, router: ttfb.router.firstByteMs.p50 });
  const overB = rate.router.rps < CONF.ttfbRate ? ` (router max ${rate.router.rps}/s: overloaded)` : '';
  rows.push({ scenario: 'b', metric: `first byte added p50, ms${overB}`, baseline: add.baseline, router: add.router, ratio: ratio(add.router, add.baseline), target: '<= 1 ms', met: target('b', 'first byte added p50 <= 1 ms', add.router, 1) });
  rows.push({ scenario: 'b', metric: 'first byte added p99, ms', baseline: added(ttfb.baseline.firstByteMs.p99, ttfb.direct.firstByteMs.p99), router: added(ttfb.router.firstByteMs.p99, ttfb.direct.firstByteMs.p99) });
  rows.push({ scenario: 'b', metric: `chunks/s (${CONF.streamConnections} streams at once)`, baseline: rate.baseline.chunksPerSec, router: rate.router.chunksPerSec, ratio: ratio(rate.router.chunksPerSec, rate.baseline.chunksPerSec) });
  rows.push({ scenario: 'b', metric: 'proxy CPU per stream, µs', baseline: rate.baseline.proxyCpuUsPerReq, router: rate.router.proxyCpuUsPerReq, ratio: ratio(rate.router.proxyCpuUsPerReq, rate.baseline.proxyCpuUsPerReq) });
  stallRow('b', [ttfb.router, rate.router]);
  if (prof) printProfile('b', prof);
}

async function scenarioC(T) {
  log('c. Anthropic SDK -> OpenAI upstream, streaming (translation)');
  const prof = opts.profile.includes('c') ? profileFile('c') : undefined;
  const direct = results.b?.firstByte.direct ?? (await atRate('direct', { ...openaiReq(T.direct, { stream: true }), stream: true }, { rate: CONF.ttfbRate, durationMs: D.ttfb }));
  const baseRate = results.b?.chunkRate.baseline ?? (await throughput('baseline', openaiReq(T.baseline, { stream: true }), { connections: CONF.streamConnections, durationMs: D.chunk }));
  baseRate.chunksPerSec ??= baseRate.rps * CONF.chunks;
  const passRate = results.b?.chunkRate.router;
  const ttfb = await atRate('router', { ...anthropicReq(T.router), stream: true }, { rate: CONF.ttfbRate, durationMs: D.ttfb });
  const rate = await throughput('router', anthropicReq(T.router), { connections: CONF.streamConnections, durationMs: D.chunk, profile: prof });
  rate.chunksPerSec = rate.rps * CONF.chunks;
  results.c = { firstByte: ttfb, chunkRate: rate };
  const add = added(ttfb.firstByteMs.p50, direct.firstByteMs.p50);
  const vsPass = ratio(rate.chunksPerSec, passRate?.chunksPerSec);
  results.c.summary = { addedFirstByteP50: add, chunkRatioVsPassthrough: r3(vsPass), chunkRatioVsBaseline: r3(ratio(rate.chunksPerSec, baseRate.chunksPerSec)) };
  rows.push({ scenario: 'c', metric: `first byte p50 @${CONF.ttfbRate} streams/s, ms`, direct: direct.firstByteMs.p50, router: ttfb.firstByteMs.p50 });
  const overC = rate.rps < CONF.ttfbRate ? ` (router max ${rate.rps}/s: overloaded)` : '';
  rows.push({ scenario: 'c', metric: `first byte added p50, ms${overC}`, router: add, target: '<= 1 ms', met: target('c', 'first byte added p50 <= 1 ms', add, 1) });
  rows.push({ scenario: 'c', metric: 'first byte added p99, ms', router: added(ttfb.firstByteMs.p99, direct.firstByteMs.p99) });
  rows.push({ scenario: 'c', metric: 'chunks/s (translated)', baseline: baseRate.chunksPerSec, router: rate.chunksPerSec, ratio: ratio(rate.chunksPerSec, baseRate.chunksPerSec) });
  rows.push({
    scenario: 'c',
    metric: 'chunks/s vs router passthrough (b)',
    baseline: passRate?.chunksPerSec,
    router: rate.chunksPerSec,
    ratio: vsPass,
    target: '>= 0.7x passthrough',
    met: target('c', 'translated chunk rate >= 0.7 x streaming passthrough', vsPass, 0.7, '>='),
  });
  // When the router is the bottleneck (an idle machine), chunk rate goes as 1 / CPU per stream.
  const cpuRatio = ratio(passRate?.proxyCpuUsPerReq, rate.proxyCpuUsPerReq);
  results.c.summary.cpuImpliedRatioVsPassthrough = r3(cpuRatio);
  rows.push({ scenario: 'c', metric: 'same, implied by router CPU per stream (b / c)', baseline: passRate?.proxyCpuUsPerReq, router: rate.proxyCpuUsPerReq, ratio: cpuRatio, target: '>= 0.7x' });
  rows.push({ scenario: 'c', metric: 'proxy CPU per stream, µs', baseline: baseRate.proxyCpuUsPerReq, router: rate.proxyCpuUsPerReq, ratio: ratio(rate.proxyCpuUsPerReq, baseRate.proxyCpuUsPerReq) });
  stallRow('c', [ttfb, rate]);
  if (prof) printProfile('c', prof);
}

/**
 * One combo variant: throughput and added latency through the combo, the error rate, and how many attempts
 * the failing target received per served request (from the mock's counters).
 */
async function comboVariant(T, mock, { id, name, models, label }) {
  const created = await manage('POST', '/api/combos', { name, strategy: 'priority', models });
  if (created.status >= 300) throw new Error(`POST /api/combos answered ${created.status}: ${JSON.stringify(created.json).slice(0, 200)}`);
  const req = openaiReq({ ...T.router, prefix: '' }, { model: name });
  await check(req, 'chat.completion');
  await ask(mock, { bench: 'counts', reset: true });
  const prof = opts.profile.includes('d') && id === 'd' ? profileFile('d') : undefined;
  const thr = await throughput('router', req, { profile: prof });
  // A combo that mostly answers errors has no latency worth measuring at a fixed rate.
  const lat = thr.errors > thr.ok ? { latencyMs: {}, ok: 0, errors: 0, skipped: 'mostly errors' } : await atRate('router', req);
  const counts = (await ask(mock, { bench: 'counts', reset: true })).counts;
  results.refs ??= {};
  const baseThr = results.a?.throughput.baseline ?? (results.refs.baselineThroughput ??= await throughput('baseline', openaiReq(T.baseline)));
  const direct = results.a?.latency.direct ?? (results.refs.directLatency ??= await atRate('direct', openaiReq(T.direct)));
  const failovers = counts.a ?? 0;
  const served = (counts.b ?? 0) + (counts.c ?? 0);
  const errRate = (x) => (x.ok + x.errors ? x.errors / (x.ok + x.errors) : null);
  const v = { models, throughput: thr, latency: lat, upstreamCounts: counts };
  v.summary = {
    rpsRatio: r3(ratio(thr.rps, baseThr?.rps)),
    addedP50: added(lat.latencyMs.p50, direct?.latencyMs.p50),
    addedP99: added(lat.latencyMs.p99, direct?.latencyMs.p99),
    errorRate: r3(errRate(thr)),
    failingTargetAttemptsPerServed: r3(served ? failovers / served : null),
    lastError: thr.lastError || lat.lastError || undefined,
  };
  rows.push({ scenario: id, metric: `${label}: max throughput, req/s`, baseline: baseThr?.rps, router: thr.rps, ratio: ratio(thr.rps, baseThr?.rps) });
  rows.push({ scenario: id, metric: `${label}: error replies, %`, router: 100 * (errRate(thr) ?? 0) });
  rows.push({ scenario: id, metric: `${label}: added p50 / p99 @${CONF.rateRps}/s, ms`, direct: direct ? `${fmt(direct.latencyMs.p50)} / ${fmt(direct.latencyMs.p99)}` : undefined, router: `${fmt(v.summary.addedP50)} / ${fmt(v.summary.addedP99)}` });
  rows.push({ scenario: id, metric: `${label}: attempts at a per served request`, router: v.summary.failingTargetAttemptsPerServed });
  if (prof) printProfile('d', prof);
  return v;
}

async function scenarioD(T, mock) {
  log('d. combo of 3 targets, the first failing (503)');
  const probeCombo = await manage('GET', '/api/combos');
  if (probeCombo.status === 404 || probeCombo.status === 405) {
    skipped.d = `combos are not available in this build (GET /api/combos -> ${probeCombo.status}); scenario d skipped`;
    return log(`  SKIPPED: ${skipped.d}`);
  }
  results.d = {};
  try {
    // First with the failing target on a provider of its own (groq, pointed at the mock): breaker and
    // cooldowns then act on that target only, which is how a failing upstream usually looks.
    const groq = await manage('POST', '/api/providers', { provider: 'groq', apiKey: 'sk-bench', providerSpecificData: { baseUrl: T.upstreamV1 } });
    if (groq.status !== 201) throw new Error(`groq connection: ${groq.status} ${JSON.stringify(groq.json).slice(0, 200)}`);
    results.d.ownProvider = await comboVariant(T, mock, { id: 'd', name: 'bench-combo-x', models: ['groq/a', 'openai/b', 'openai/c'], label: 'failing a on its own provider' });
    // Then the shape of the issue: all three on one provider. The 503s of `a` open the circuit of
    // (provider, a) only, so `b` keeps serving (before model circuits, the whole provider was refused).
    results.d.sameProvider = await comboVariant(T, mock, { id: 'd', name: 'bench-combo', models: CONF.comboModels, label: 'a, b, c on one provider' });
  } catch (err) {
    skipped.d = `scenario d could not run: ${err.message.slice(0, 300)}`;
    return log(`  SKIPPED: ${skipped.d}`);
  }
}

async function scenarioE(T, routerPid) {
  log(`e. ${CONF.openStreams} concurrent open streams (${CONF.openStreamModel})`);
  const before = rssOf(routerPid);
  const prof = opts.profile.includes('e') ? profileFile('e') : undefined;
  let peak = before;
  let eldStats;
  let sampler;
  let heldMeter;
  let heldDone;
  let progress;
  const job = ask(loadgen, { kind: 'streams', ...openaiReq(T.router, { stream: true, model: CONF.openStreamModel }), count: CONF.openStreams, rampMs: 1000, openTimeoutMs: D.openTimeout, holdMs: D.hold }, {
    onProgress: (m) => {
      progress = m;
      log(`  ${m.open} streams delivering, ${m.failed} failed after ${m.ms} ms${m.timedOut ? ' (open timeout: the rest are queued)' : ''}; holding ${D.hold} ms`);
      void probe({ bench: 'reset' });
      if (prof) void probe({ bench: 'profile-start', intervalUs: 500 });
      heldMeter = cpuMeter(pids);
      // Figures of the hold itself, taken just before the load generator tears the streams down.
      heldDone = new Promise((resolve) =>
        setTimeout(async () => {
          const stats = await probe({ bench: 'stats' });
          const cpu = heldMeter();
          // Live memory per open stream: heap after a full GC, streams still open (after the delay figures).
          stats.liveHeap = (await probe({ bench: 'stats', gc: true })).heapUsed;
          if (prof) await probe({ bench: 'profile-stop', file: prof });
          resolve({ stats, cpu });
        }, Math.max(100, D.hold - 150)),
      );
      sampler = setInterval(() => {
        const r = rssOf(routerPid);
        if (r > peak) peak = r;
      }, 200);
    },
  });
  // Sample RSS during the ramp as well.
  const rampSampler = setInterval(() => {
    const r = rssOf(routerPid);
    if (r > peak) peak = r;
  }, 200);
  const r = await job;
  clearInterval(rampSampler);
  clearInterval(sampler);
  const held = heldDone ? await heldDone : { stats: await probe({ bench: 'stats' }) };
  eldStats = held.stats;
  const heldCpu = held.cpu;
  if (prof) printProfile('e', prof);
  await sleep(1000);
  const after = rssOf(routerPid);
  results.e = { streams: r, progress, heldCpu, rssBefore: before, rssPeak: peak, rssAfter: after, eld: eldStats.eld, heapUsed: eldStats.heapUsed };
  const mb = (b) => (typeof b === 'number' ? b / 1024 / 1024 : null);
  const allOpen = r.open >= CONF.openStreams;
  rows.push({ scenario: 'e', metric: `streams delivering within ${D.openTimeout / 1000} s`, router: r.open, target: `${CONF.openStreams}`, met: target('e', `all ${CONF.openStreams} streams deliver`, r.open, CONF.openStreams, '>=') });
  rows.push({ scenario: 'e', metric: 'stream first byte p50 / p99, ms', router: `${fmt(r.firstByteMs.p50)} / ${fmt(r.firstByteMs.p99)}` });
  rows.push({ scenario: 'e', metric: `router RSS peak, MB${allOpen ? '' : ` (${r.open} open)`}`, router: mb(peak), target: '<= 200 MB', met: target('e', 'RSS <= 200 MB at 1,000 open streams', mb(peak), 200) });
  if (eldStats.liveHeap) {
    results.e.liveHeap = eldStats.liveHeap;
    rows.push({ scenario: 'e', metric: 'router heap after GC while held, MB (per open stream, KB)', router: `${fmt(mb(eldStats.liveHeap))} (${fmt((eldStats.liveHeap - (results.router?.heapAfterSetup ?? 0)) / 1024 / Math.max(1, r.open))})` });
  }
  rows.push({ scenario: 'e', metric: 'router CPU while held, cores', router: heldCpu?.procCores.router, direct: undefined });
  rows.push({ scenario: 'e', metric: 'event-loop delay p99 (held), ms', router: eldStats.eld.p99, target: '<= 20 ms', met: target('e', 'event-loop delay p99 <= 20 ms', eldStats.eld.p99, 20) });
}

async function scenarioF() {
  log('f. idle RSS, start-to-healthy, `router status`');
  const floor = [];
  for (let i = 0; i < 3; i++) floor.push((await timed(process.execPath, ['-e', '0'])).ms);
  const home = mkdtempSync(join(os.tmpdir(), 'router-bench-f-'));
  const starts = [];
  const statuses = [];
  const rss = [];
  try {
    for (let i = 0; i < D.starts; i++) {
      const port = await freePort();
      const s = await timed(process.execPath, [CLI, 'start', '--home', home, '--port', String(port)]);
      if (s.code !== 0) throw new Error(`router start failed: ${s.stderr || s.stdout}`);
      const health = await fetch(`http://127.0.0.1:${port}/api/health`);
      if (health.status !== 200) throw new Error(`not healthy after start: ${health.status}`);
      starts.push(s.ms);
      const pid = JSON.parse(readFileSync(join(home, 'router.pid'), 'utf8')).pid;
      await sleep(i === 0 ? (opts.quick ? 1500 : 3000) : 500);
      if (i === 0) rss.push(rssOf(pid));
      if (i === 0) {
        for (let k = 0; k < D.statuses; k++) {
          const st = await timed(process.execPath, [CLI, 'status', '--home', home]);
          if (st.code !== 0) throw new Error(`router status failed: ${st.stderr || st.stdout}`);
          statuses.push(st.ms);
        }
      }
      const stop = await timed(process.execPath, [CLI, 'stop', '--home', home]);
      if (stop.code !== 0) throw new Error(`router stop failed: ${stop.stderr || stop.stdout}`);
    }
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
  const warm = starts.slice(1);
  results.f = {
    nodeStartFloorMs: median(floor),
    startMs: starts.map((x) => Math.round(x)),
    startFreshMs: Math.round(starts[0]),
    startWarmMedianMs: median(warm),
    idleRss: rss,
    idleRssMedian: median(rss),
    statusMs: statuses.map((x) => Math.round(x)),
    statusMedianMs: median(statuses),
  };
  const mb = (b) => b / 1024 / 1024;
  rows.push({ scenario: 'f', metric: 'idle RSS, MB', router: mb(results.f.idleRssMedian), target: '<= 90 MB', met: target('f', 'idle RSS <= 90 MB', mb(results.f.idleRssMedian), 90) });
  rows.push({ scenario: 'f', metric: '`router start` to healthy, first / later, ms', router: `${Math.round(starts[0])} / ${Math.round(median(warm) ?? starts[0])}`, target: '<= 1,500 ms', met: target('f', 'start-to-healthy <= 1.5 s', Math.max(...starts), 1500) });
  rows.push({ scenario: 'f', metric: '`router status` wall, ms (direct: `node -e 0`)', direct: median(floor), router: median(statuses), target: '<= 300 ms', met: target('f', '`router status` <= 300 ms', median(statuses), 300) });
}

function printProfile(id, file) {
  try {
    const text = summarize(file, 25);
    writeFileSync(file.replace(/\.cpuprofile$/, '.txt'), text);
    log(`profile of scenario ${id}:\n${text}`);
  } catch (err) {
    log(`profile summary failed: ${err.message}`);
  }
}

// ---------------------------------------------------------------------------------------------- main

function machine() {
  const cpus = os.cpus();
  let commit = 'unknown';
  let dirty = false;
  try {
    commit = execFileSync('git', ['rev-parse', '--short=12', 'HEAD'], { cwd: ROOT }).toString().trim();
    dirty = execFileSync('git', ['status', '--porcelain', '--untracked-files=no', 'src'], { cwd: ROOT }).toString().trim().length > 0;
  } catch {
    // not a git checkout
  }
  return {
    cpuModel: cpus[0]?.model,
    cores: cpus.length,
    memGB: Math.round(os.totalmem() / 2 ** 30),
    os: `${os.type()} ${os.release()} ${os.arch()}`,
    node: process.version,
    commit,
    srcDirty: dirty,
    loadavgStart: os.loadavg().map((x) => Math.round(x * 100) / 100),
  };
}

async function main() {
  if (!existsSync(ENTRY)) throw new Error('dist/ is missing: run `npm run build` (or use `npm run bench`, which builds first)');
  const t0 = Date.now();
  const info = machine();
  if (opts.routerRoot) log(`router from ${RROOT}`);
  log(`mode ${opts.quick ? 'quick' : 'full'}${opts.partial ? ' (partial)' : ''}; ${info.cores} cores ${info.cpuModel}; node ${info.node}; commit ${info.commit}${info.srcDirty ? ' (+ uncommitted src changes)' : ''}; load average ${info.loadavgStart.join(' ')}`);

  const mock = track(spawnNode([join(LIB, 'mock-upstream.mjs'), JSON.stringify({ chunks: CONF.chunks, failModels: CONF.failModels })], { name: 'mock upstream' }));
  const mockPort = (await mock.ready).port;
  const base = track(spawnNode([join(LIB, 'baseline-proxy.mjs'), String(mockPort)], { name: 'baseline proxy' }));
  const basePort = (await base.ready).port;
  const lg = track(spawnNode([join(LIB, 'loadgen.mjs')], { name: 'load generator' }));
  await lg.ready;
  loadgen = lg.child;

  const home = mkdtempSync(join(os.tmpdir(), 'router-bench-'));
  routerHandle = track(
    spawnNode([...DAEMON_NODE_FLAGS, '--expose-gc', '--import', pathToFileURL(join(LIB, 'probe.mjs')).href, ENTRY, '--home', home, '--host', '127.0.0.1', '--port', '0'], {
      env: { ...DAEMON_ENV, ROUTER_START_NONCE: 'bench', ROUTER_DEBUG: '' },
      name: 'router daemon',
    }),
  );
  const ready = await routerHandle.ready;
  routerUrl = ready.url;
  const { deriveCliToken } = await import(pathToFileURL(join(RROOT, 'dist/shared/cli-token.js')).href);
  routerCliToken = deriveCliToken(join(home, 'cli-token.salt'));
  probe = (msg) => ask(routerHandle.child, msg, { timeoutMs: 60_000 });
  pids = { router: ready.pid, baseline: base.child.pid, upstream: mock.child.pid, loadgen: lg.child.pid };

  const key = await manage('POST', '/api/keys', { name: 'bench', scopes: ['proxy'] });
  if (key.status !== 201) throw new Error(`key create failed: ${key.status} ${JSON.stringify(key.json)}`);
  const conn = await manage('POST', '/api/providers', { provider: 'openai', apiKey: 'sk-bench', providerSpecificData: { baseUrl: `http://127.0.0.1:${mockPort}/v1` } });
  if (conn.status !== 201) throw new Error(`provider create failed: ${conn.status} ${JSON.stringify(conn.json)}`);
  const idleRssMain = rssOf(ready.pid);
  results.router = { heapAfterSetup: (await probe({ bench: 'stats', gc: true })).heapUsed };

  const T = {
    direct: { origin: `http://127.0.0.1:${mockPort}`, prefix: '', key: 'sk-bench' },
    baseline: { origin: `http://127.0.0.1:${basePort}`, prefix: '', key: 'sk-bench' },
    router: { origin: routerUrl, prefix: 'openai/', key: key.json.key },
    upstreamV1: `http://127.0.0.1:${mockPort}/v1`,
  };
  for (const n of ['direct', 'baseline', 'router']) {
    await check(openaiReq(T[n]), '"chat.completion"');
    await check(openaiReq(T[n], { stream: true }), 'data: [DONE]');
  }
  await check(anthropicReq(T.router), 'content_block_delta');
  log(`processes: upstream ${mockPort}, baseline ${basePort}, router ${routerUrl} (pid ${ready.pid}, home ${home}); sanity checks passed`);

  const run = (id) => opts.only.includes(id);
  // JIT warm-up of every process on every path measured later: under CPU contention the first seconds of a
  // cold Node process run several times slower, which would otherwise land in whichever phase comes first.
  log(`warm-up (${D.warmup} ms per path)`);
  const warm = (req) => ask(loadgen, { kind: 'throughput', ...req, connections: 8, warmupMs: 0, durationMs: D.warmup });
  for (const n of ['direct', 'baseline', 'router']) {
    if (run('a') || run('d')) await warm(openaiReq(T[n]));
    if (run('b') || run('c') || run('e')) await warm(openaiReq(T[n], { stream: true }));
  }
  if (run('c')) await warm(anthropicReq(T.router));
  try {
    if (run('a')) await scenarioA(T);
    if (run('b')) await scenarioB(T);
    if (run('c')) await scenarioC(T);
    // e before d: d may leave the openai provider's circuit breaker open for its cooldown.
    if (run('e')) await scenarioE(T, ready.pid);
    if (run('d')) await scenarioD(T, mock.child);
    Object.assign(results.router, { idleRssAfterSetup: idleRssMain, rssAtEnd: rssOf(ready.pid) });
  } finally {
    await stopAll();
    rmSync(home, { recursive: true, force: true });
  }
  if (run('f')) await scenarioF();

  info.loadavgEnd = os.loadavg().map((x) => Math.round(x * 100) / 100);
  const others = [];
  const collect = (o) => {
    if (!o || typeof o !== 'object') return;
    if (typeof o.otherCores === 'number') others.push(o.otherCores);
    for (const v of Object.values(o)) collect(v);
  };
  collect(results);
  info.otherLoadCoresMedian = median(others);
  info.otherLoadCoresMax = others.length ? Math.max(...others) : null;
  const loaded = (info.otherLoadCoresMedian ?? 0) >= 0.2;

  const when = new Date(t0);
  const stamp = when.toISOString().replace(/:\d\d\.\d+Z$/, 'Z').replace(/:/g, '-');
  const mode = opts.quick ? 'quick' : 'full';
  const table = renderTable(rows);
  const header =
    `${mode} run ${when.toISOString().slice(0, 16).replace('T', ' ')} UTC, commit ${info.commit}${info.srcDirty ? '+' : ''}, node ${info.node}, ` +
    `${info.cores} x ${info.cpuModel}; load average ${info.loadavgStart.join('/')} at start; ` +
    `other processes used ${fmt(info.otherLoadCoresMedian)} cores (median over phases, max ${fmt(info.otherLoadCoresMax)})` +
    (loaded ? ' - **taken on a loaded machine**' : '');
  const notes = Object.values(skipped).map((s) => `- ${s}`);
  const missed = targets.filter((t) => t.met === false).map((t) => `- missed (${t.id}): ${t.text}: measured ${fmt(t.value)}`);
  const out = [header, '', table, ...(notes.length || missed.length ? ['', ...notes, ...missed] : [])].join('\n');
  process.stdout.write(`\n${out}\n`);

  const doc = { schema: 1, mode, partial: opts.partial, startedAt: when.toISOString(), durationS: Math.round((Date.now() - t0) / 1000), machine: info, config: { ...CONF, durations: D }, targets, skipped, table: rows, results };
  if (opts.save) {
    mkdirSync(join(ROOT, 'bench/results'), { recursive: true });
    const file = join(ROOT, 'bench/results', `${stamp}-${mode}${opts.partial ? '-partial' : ''}.json`);
    writeFileSync(file, `${JSON.stringify(doc, null, 1)}\n`);
    log(`results written to ${file.slice(ROOT.length)}`);
  }
  if (opts.docs && !opts.partial) {
    const ok = updateDocs(join(ROOT, 'docs/performance.md'), out);
    log(ok ? 'docs/performance.md table updated' : 'docs/performance.md has no bench markers: table not copied');
  }
  log(`done in ${Math.round((Date.now() - t0) / 1000)} s`);
}

main().catch(async (err) => {
  process.stderr.write(`[bench] failed: ${err.stack ?? err}\n`);
  if (routerHandle) process.stderr.write(`[bench] router stderr: ${routerHandle.stderr()}\n`);
  await stopAll().catch(() => {});
  process.exit(1);
});
