#!/usr/bin/env node
// A/B comparison of two router builds on the same machine, phases interleaved so that background load hits
// both alike. Reports throughput and the router's CPU time per request (the figure least sensitive to what
// else runs on the machine).
//
//   node bench/compare.mjs --a /path/to/checkoutA --b /path/to/checkoutB [--kind nonstream|stream|anthropic] [--b-node "--flag"]
//                          [--rounds 4] [--ms 3000] [--connections 32] [--b-env "K=V K2=V2"] [--combo]
// --combo: requests name a one-target combo (`bench`, strategy priority, every optional field at its default)
// instead of `openai/gpt-bench`, so the combo planning path is measured.
// --a-env / --b-env: extra environment for that build's daemon (e.g. a trace collector that does not answer:
// --b-env "OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:9"); A and B may then be the same checkout.
// Each checkout needs dist/ (built) and node_modules/ (a symlink to this repo's is fine).
// RSS: each daemon's idle RSS (after its setup and a 2 s settle, before any load) and its peak RSS during its
// own loaded phases (sampled every 100 ms) are reported beside the CPU figures.
// --json FILE: also writes the summary (per build: req/s, CPU µs per request, idle and peak RSS) to FILE.
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { writeFileSync } from 'node:fs';
import { ask, cpuMeter, median, rssOf, spawnNode } from './lib/procs.mjs';

const LIB = fileURLToPath(new URL('./lib/', import.meta.url));
const args = process.argv.slice(2);
const arg = (n, d) => {
  const i = args.indexOf(`--${n}`);
  return i >= 0 ? args[i + 1] : d;
};
const builds = { A: arg('a'), B: arg('b') };
if (!builds.A || !builds.B) {
  process.stderr.write('usage: node bench/compare.mjs --a DIR --b DIR [--kind nonstream|stream|anthropic] [--rounds N] [--ms MS]\n');
  process.exit(2);
}
const kind = arg('kind', 'nonstream');
const rounds = Number(arg('rounds', 4));
const ms = Number(arg('ms', 3000));
const connections = Number(arg('connections', kind === 'nonstream' ? 32 : 16));

const mock = spawnNode([join(LIB, 'mock-upstream.mjs'), '{}'], { name: 'mock' });
const mockPort = (await mock.ready).port;
const lg = spawnNode([join(LIB, 'loadgen.mjs')], { name: 'loadgen' });
await lg.ready;
const routers = {};
const homes = [];
for (const [name, dir] of Object.entries(builds)) {
  const home = mkdtempSync(join(os.tmpdir(), `router-cmp-${name}-`));
  homes.push(home);
  // --a-node / --b-node: extra Node flags for that build's daemon (e.g. "--max-semi-space-size=4").
  const nodeFlags = (arg(`${name.toLowerCase()}-node`) ?? '').split(' ').filter(Boolean);
  const h = spawnNode([...nodeFlags, '--import', pathToFileURL(join(LIB, 'probe.mjs')).href, join(dir, 'dist/daemon/entry.js'), '--home', home, '--host', '127.0.0.1', '--port', '0'], {
    env: { ROUTER_START_NONCE: 'bench', ...Object.fromEntries((arg(`${name.toLowerCase()}-env`) ?? '').split(' ').filter(Boolean).map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)])) },
    name: `router ${name}`,
  });
  const ready = await h.ready;
  const { deriveCliToken } = await import(pathToFileURL(join(dir, 'dist/shared/cli-token.js')).href);
  const token = deriveCliToken(join(home, 'cli-token.salt'));
  const manage = async (method, path, body) => {
    const res = await fetch(`${ready.url}${path}`, { method, headers: { 'x-router-cli-token': token, 'content-type': 'application/json' }, body: body && JSON.stringify(body) });
    return { status: res.status, json: await res.json().catch(() => undefined) };
  };
  const key = (await manage('POST', '/api/keys', { name: 'bench', scopes: ['proxy'] })).json.key;
  await manage('POST', '/api/providers', { provider: 'openai', apiKey: 'sk-bench', providerSpecificData: { baseUrl: `http://127.0.0.1:${mockPort}/v1` } });
  if (args.includes('--combo')) await manage('POST', '/api/combos', { name: 'bench', models: ['openai/gpt-bench'] });
  routers[name] = { handle: h, url: ready.url, pid: ready.pid, key, manage };
}

const model = args.includes('--combo') ? 'bench' : 'openai/gpt-bench';

// Idle RSS: both daemons set up, nothing sent yet; a short settle lets start-up garbage be collected.
await new Promise((r) => setTimeout(r, 2000));
const idleRss = {};
for (const [name, r] of Object.entries(routers)) idleRss[name] = rssOf(r.pid);
const peakRss = { A: 0, B: 0 };
/** Samples `name`'s RSS every 100 ms until the returned function is called. */
function watchRss(name) {
  const sample = () => {
    const v = rssOf(routers[name].pid);
    if (v !== null && v > peakRss[name]) peakRss[name] = v;
  };
  const timer = setInterval(sample, 100);
  return () => {
    clearInterval(timer);
    sample();
  };
}

function req(r) {
  const msg = [{ role: 'user', content: 'Say hello in one short sentence.' }];
  if (kind === 'anthropic') {
    return {
      origin: r.url,
      path: '/v1/messages',
      headers: { 'content-type': 'application/json', 'anthropic-version': '2023-06-01', 'x-api-key': r.key },
      body: JSON.stringify({ model, max_tokens: 32, stream: true, messages: msg }),
    };
  }
  return {
    origin: r.url,
    path: '/v1/chat/completions',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${r.key}` },
    body: JSON.stringify({ model, messages: msg, max_tokens: 32, ...(kind === 'stream' ? { stream: true } : {}) }),
  };
}

const out = { A: [], B: [] };
for (const name of ['A', 'B']) await ask(lg.child, { kind: 'throughput', ...req(routers[name]), connections: 8, warmupMs: 0, durationMs: 2000 });
for (let i = 0; i < rounds; i++) {
  for (const name of i % 2 ? ['B', 'A'] : ['A', 'B']) {
    const r = routers[name];
    const meter = cpuMeter({ router: r.pid });
    const stopWatch = watchRss(name);
    const res = await ask(lg.child, { kind: 'throughput', ...req(r), connections, warmupMs: 500, durationMs: ms });
    stopWatch();
    const cpu = meter();
    const us = Math.round((cpu.routerCpuMs * 1000) / res.all);
    out[name].push({ rps: res.rps, us, other: cpu.otherCores, errors: res.errors });
    process.stderr.write(`round ${i + 1} ${name}: ${res.rps} req/s, router ${us} µs CPU/req, other load ${cpu.otherCores} cores${res.errors ? `, ${res.errors} errors` : ''}\n`);
  }
}
const summary = {};
for (const name of ['A', 'B']) {
  summary[name] = {
    rps: median(out[name].map((x) => x.rps)),
    cpuUsPerReq: median(out[name].map((x) => x.us)),
    cpuUsRounds: out[name].map((x) => x.us),
    idleRssMb: idleRss[name] === null ? null : Math.round(idleRss[name] / 1e5) / 10,
    peakRssMb: Math.round(peakRss[name] / 1e5) / 10,
    otherCores: median(out[name].map((x) => x.other)),
  };
}
const x = (b, a) => (a && b ? (b / a).toFixed(2) : '?');
process.stdout.write(
  `${kind}: A ${summary.A.rps} req/s, ${summary.A.cpuUsPerReq} µs/req, RSS idle ${summary.A.idleRssMb} / peak ${summary.A.peakRssMb} MB | ` +
    `B ${summary.B.rps} req/s, ${summary.B.cpuUsPerReq} µs/req, RSS idle ${summary.B.idleRssMb} / peak ${summary.B.peakRssMb} MB | ` +
    `B/A throughput ${x(summary.B.rps, summary.A.rps)}x, CPU/req ${x(summary.B.cpuUsPerReq, summary.A.cpuUsPerReq)}x, ` +
    `idle RSS ${x(summary.B.idleRssMb, summary.A.idleRssMb)}x, peak RSS ${x(summary.B.peakRssMb, summary.A.peakRssMb)}x\n`,
);
const jsonOut = arg('json');
if (jsonOut) writeFileSync(jsonOut, JSON.stringify({ kind, rounds, ms, connections, builds, ...summary }, null, 2));
for (const r of Object.values(routers)) await r.manage('POST', '/api/system/shutdown').catch(() => {});
await new Promise((r) => setTimeout(r, 500));
for (const p of [mock, lg, ...Object.values(routers).map((r) => r.handle)]) if (p.child.exitCode === null) p.child.kill('SIGTERM');
for (const h of homes) rmSync(h, { recursive: true, force: true });
