#!/usr/bin/env node
// The cluster bench (issue 29): one node on its SQLite file vs three nodes on one PostgreSQL 15 and one
// Redis 7 behind this script's own round-robin; all processes on this machine, a canned upstream.
//   npm run bench -- --cluster 3      (or: node bench/cluster.mjs [--nodes 3] [--seconds 8] [--connections 24] [--rate 500])
// Reports, as Markdown and JSON (bench/results/<time>-cluster.json):
//   - req/s and CPU ms per request (the routers' processes, /proc) of one node and of the cluster;
//   - Redis round trips per request on the request path (EVALSHA/EVAL of the limit check, INFO commandstats)
//     and every Redis command per request (heartbeats and pub/sub excluded), for a key with a daily limit;
//     the same with the key's response cache on (cache mode always: limit check plus cache lookup);
//   - the added latency of shared limits at a fixed rate (default 500 req/s): the cluster, a key with a
//     daily limit (one Lua round trip) against a key without (none), p50/p90/p99;
//   - the machine's load while measuring (other processes' CPU in cores, load average).
// Needs dist/ (npm run build), PostgreSQL 15 binaries (/usr/lib/postgresql/15/bin, initdb as the postgres
// user when run as root) and redis-server.
import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, chownSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Pool } from 'undici';
import { opt, startDaemon, startMock } from './lib/bench-daemon.mjs';
import { cpuMsOf, freePort, sleep, systemCpu } from './lib/procs.mjs';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const args = process.argv.slice(2);
const NODES = opt('nodes', opt('cluster', 3));
const SECONDS = opt('seconds', 8);
const CONNECTIONS = opt('connections', 24);
const RATE = opt('rate', 500);
const PG_BIN = process.env.ROUTER_TEST_PG_BIN ?? '/usr/lib/postgresql/15/bin';

const MOCK = `
import { createServer } from 'node:http';
const json = JSON.stringify({ id: 'chatcmpl-bench', object: 'chat.completion', created: 1, model: 'gpt-4o',
  choices: [{ index: 0, message: { role: 'assistant', content: 'Hello from the bench upstream.' }, finish_reason: 'stop' }],
  usage: { prompt_tokens: 42, completion_tokens: 8, total_tokens: 50 } });
const server = createServer((req, res) => {
  req.resume();
  req.on('end', () => { res.writeHead(200, { 'content-type': 'application/json' }); res.end(json); });
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => process.send({ port: server.address().port }));
`;

// ------------------------------------------------------------------------------------ servers

const asRoot = process.getuid?.() === 0;
const asPostgres = (bin, a) => (asRoot ? ['runuser', ['-u', 'postgres', '--', join(PG_BIN, bin), ...a]] : [join(PG_BIN, bin), a]);

async function startPostgres() {
  const dir = mkdtempSync(join(os.tmpdir(), 'router-bench-pg-'));
  if (asRoot) {
    const id = (f) => Number(spawnSync('id', [f, 'postgres']).stdout.toString().trim());
    chownSync(dir, id('-u'), id('-g'));
  }
  chmodSync(dir, 0o700);
  const data = join(dir, 'data');
  const [ic, ia] = asPostgres('initdb', ['-D', data, '-A', 'trust', '-U', 'postgres', '-E', 'UTF8', '--locale=C', '--no-sync']);
  const init = spawnSync(ic, ia, { encoding: 'utf8' });
  if (init.status !== 0) throw new Error(`initdb failed: ${init.stderr}`);
  const port = await freePort();
  // Durable as a real deployment would run it (fsync and synchronous commit on).
  const [pc, pa] = asPostgres('postgres', ['-D', data, '-p', String(port), '-c', 'listen_addresses=127.0.0.1', '-c', `unix_socket_directories=${dir}`, '-c', 'max_connections=200']);
  const child = spawn(pc, pa, { stdio: 'ignore' });
  const url = `postgres://postgres@127.0.0.1:${port}/postgres`;
  const { default: pg } = await import('pg');
  for (let i = 0; ; i++) {
    const c = new pg.Client({ connectionString: url });
    try {
      await c.connect();
      await c.end();
      break;
    } catch {
      await c.end().catch(() => {});
      if (i > 300) throw new Error('postgres did not start');
      await sleep(100);
    }
  }
  return {
    url,
    pid: child.pid,
    async stop() {
      // pg_ctl, not a signal to the child: as root the child is runuser, which does not pass SIGINT on.
      const [sc, sa] = asPostgres('pg_ctl', ['stop', '-D', data, '-m', 'fast', '-w']);
      spawnSync(sc, sa, { stdio: 'ignore', timeout: 30_000 });
      if (child.exitCode === null) await new Promise((r) => child.once('exit', r));
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

async function startRedis() {
  const port = await freePort();
  const dir = mkdtempSync(join(os.tmpdir(), 'router-bench-redis-'));
  const child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir], { stdio: 'ignore' });
  const { Redis } = await import('ioredis');
  const client = new Redis(`redis://127.0.0.1:${port}`, { lazyConnect: true, retryStrategy: () => 100 });
  for (let i = 0; ; i++) {
    try {
      await client.connect();
      break;
    } catch {
      if (i > 100) throw new Error('redis did not start');
      await sleep(100);
    }
  }
  return {
    url: `redis://127.0.0.1:${port}`,
    pid: child.pid,
    /** Calls per command since the server started (INFO commandstats). */
    async commandCalls() {
      const text = await client.info('commandstats');
      const out = {};
      for (const m of text.matchAll(/cmdstat_([a-z|_-]+):calls=(\d+)/g)) out[m[1]] = Number(m[2]);
      return out;
    },
    async stop() {
      client.disconnect();
      child.kill('SIGKILL');
      await new Promise((r) => (child.exitCode !== null ? r() : child.once('exit', r)));
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

// ------------------------------------------------------------------------------------ load

const body = JSON.stringify({ model: 'openai/gpt-4o', messages: [{ role: 'user', content: 'Say hello to the benchmark.' }] });

/** Closed loop for `seconds`: CONNECTIONS workers, each request to the next node in turn. */
async function closedLoop(urls, key, seconds) {
  const pools = urls.map((u) => new Pool(u, { connections: Math.ceil(CONNECTIONS / urls.length) + 2, pipelining: 1 }));
  const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
  const until = performance.now() + seconds * 1000;
  let next = 0;
  let ok = 0;
  let failed = 0;
  let lastError = '';
  const worker = async () => {
    while (performance.now() < until) {
      const pool = pools[next++ % pools.length];
      try {
        const r = await pool.request({ method: 'POST', path: '/v1/chat/completions', headers, body });
        const text = await r.body.text();
        if (r.statusCode === 200) ok++;
        else {
          failed++;
          lastError = `${r.statusCode} ${text.slice(0, 200)}`;
        }
      } catch (err) {
        failed++;
        lastError = String(err?.message ?? err);
      }
    }
  };
  const t0 = performance.now();
  await Promise.all(Array.from({ length: CONNECTIONS }, worker));
  const elapsed = (performance.now() - t0) / 1000;
  await Promise.all(pools.map((p) => p.close()));
  if (failed > 0) say(`closed loop: ${failed} failed, last: ${lastError}`);
  return { rps: ok / elapsed, ok, failed };
}

/** Open loop at `rate` req/s for `seconds`, round-robin; latency of each request from its scheduled send. */
async function openLoop(urls, key, rate, seconds) {
  const pools = urls.map((u) => new Pool(u, { connections: 64, pipelining: 1 }));
  const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
  const total = Math.round(rate * seconds);
  const lat = [];
  let failed = 0;
  const t0 = performance.now();
  const sends = [];
  for (let i = 0; i < total; i++) {
    const at = t0 + (i * 1000) / rate;
    const wait = at - performance.now();
    if (wait > 1) await sleep(wait);
    const pool = pools[i % pools.length];
    sends.push(
      pool.request({ method: 'POST', path: '/v1/chat/completions', headers, body }).then(
        async (r) => {
          await r.body.text();
          if (r.statusCode === 200) lat.push(performance.now() - at);
          else failed++;
        },
        () => failed++,
      ),
    );
  }
  await Promise.all(sends);
  await Promise.all(pools.map((p) => p.close()));
  lat.sort((a, b) => a - b);
  const at = (p) => Math.round(lat[Math.min(lat.length - 1, Math.ceil((p / 100) * lat.length) - 1)] * 100) / 100;
  return { ok: lat.length, failed, p50: at(50), p90: at(90), p99: at(99) };
}

/** Runs `fn` and measures the routers' CPU (ms) and the machine's other load. */
async function measured(pids, fn) {
  const before = pids.map(cpuMsOf);
  const sys0 = systemCpu();
  const t0 = performance.now();
  const result = await fn();
  const wall = performance.now() - t0;
  const cpuMs = pids.map((p, i) => cpuMsOf(p) - before[i]).reduce((a, b) => a + b, 0);
  const sys1 = systemCpu();
  const busyCores = sys0 && sys1 ? (sys1.busy - sys0.busy) / wall : null;
  return { ...result, routerCpuMs: cpuMs, routerCores: cpuMs / wall, machineBusyCores: busyCores };
}

async function prepareNode(d, mockPort) {
  await d.manage('POST', '/api/providers', { provider: 'openai', apiKey: 'sk-bench', providerSpecificData: { baseUrl: `http://127.0.0.1:${mockPort}/v1` } });
}

// ------------------------------------------------------------------------------------ run

const say = (m) => process.stderr.write(`[cluster bench ${new Date().toISOString().slice(11, 19)}] ${m}\n`);
const round = (x, d = 2) => (x === null || x === undefined ? null : Math.round(x * 10 ** d) / 10 ** d);
const mock = await startMock(MOCK);
const report = { nodes: NODES, seconds: SECONDS, connections: CONNECTIONS, rate: RATE, cpus: os.cpus().length, loadAvg: os.loadavg().map((x) => round(x)) };

// One node, one machine: the SQLite file, in-process limits.
{
  say('one node: starting');
  const d = await startDaemon({ name: 'single' });
  await prepareNode(d, mock.port);
  const { key } = await d.manage('POST', '/api/keys', { name: 'bench', scopes: ['proxy'], dailyRequestLimit: 100_000_000 });
  await closedLoop([d.url], key, 2); // warm-up
  const r = await measured([d.pid], () => closedLoop([d.url], key, SECONDS));
  report.single = { rps: round(r.rps, 0), cpuMsPerRequest: round(r.routerCpuMs / r.ok, 3), routerCores: round(r.routerCores), machineBusyCores: round(r.machineBusyCores), failed: r.failed };
  await d.stop();
}

// The cluster: PostgreSQL + Redis + N nodes.
say('cluster: starting PostgreSQL, Redis and the nodes');
const pg = await startPostgres();
const redis = await startRedis();
const secret = randomBytes(32).toString('hex');
const env = (i) => ({ ...process.env, ROUTER_DATABASE_URL: pg.url, ROUTER_REDIS_URL: redis.url, ROUTER_SECRET_KEY: secret, ROUTER_NODE_ID: `bench-${i + 1}` });
const nodes = [await startDaemon({ name: 'node1', env: env(0) })];
for (let i = 1; i < NODES; i++) nodes.push(await startDaemon({ name: `node${i + 1}`, env: env(i) }));
try {
  for (const n of nodes) await prepareNode(n, mock.port);
  const { key: limited, id: limitedId } = await nodes[0].manage('POST', '/api/keys', { name: 'limited', scopes: ['proxy'], dailyRequestLimit: 100_000_000 });
  const plain = (await nodes[0].manage('POST', '/api/keys', { name: 'plain', scopes: ['proxy'] })).key;
  await sleep(1500); // the keys reach every node (change feed)
  const urls = nodes.map((n) => n.url);
  const pids = nodes.map((n) => n.pid);
  say('cluster: measuring throughput');
  await closedLoop(urls, limited, 2); // warm-up

  const calls0 = await redis.commandCalls();
  const r = await measured(pids, () => closedLoop(urls, limited, SECONDS));
  const calls1 = await redis.commandCalls();
  const delta = Object.fromEntries(Object.keys(calls1).map((k) => [k, calls1[k] - (calls0[k] ?? 0)]).filter(([, v]) => v > 0));
  const background = new Set(['zadd', 'zremrangebyscore', 'zcard', 'multi', 'exec', 'publish', 'info', 'subscribe', 'ping']);
  const onPath = (delta.evalsha ?? 0) + (delta.eval ?? 0);
  const all = Object.entries(delta).filter(([k]) => !background.has(k)).reduce((n, [, v]) => n + v, 0);
  report.cluster = {
    rps: round(r.rps, 0),
    cpuMsPerRequest: round(r.routerCpuMs / r.ok, 3),
    routerCores: round(r.routerCores),
    machineBusyCores: round(r.machineBusyCores),
    failed: r.failed,
    redisRoundTripsPerRequest: round(onPath / r.ok, 3),
    redisCommandsPerRequest: round(all / r.ok, 3),
    redisCommands: delta,
  };

  // The response cache shared in Redis: the same key in cache mode `always` (the bench's one prompt: hits
  // after each node's first store). Its lookup is one more Lua round trip; a store runs after the reply.
  await nodes[0].manage('PUT', `/api/cache/keys/${limitedId}`, { mode: 'always' });
  await sleep(1000); // the mode reaches every node (change feed)
  await closedLoop(urls, limited, 1); // each node's first store
  const cache0 = await redis.commandCalls();
  const cached = await closedLoop(urls, limited, Math.min(SECONDS, 4));
  const cache1 = await redis.commandCalls();
  const lua = (calls) => (calls.evalsha ?? 0) + (calls.eval ?? 0);
  report.cacheOn = { requests: cached.ok, redisRoundTripsPerRequest: round((lua(cache1) - lua(cache0)) / cached.ok, 3) };
  await nodes[0].manage('PUT', `/api/cache/keys/${limitedId}`, { mode: 'request' });

  // Added latency of shared limits at a fixed rate: limited key (one Lua call) vs plain key (none).
  say(`cluster: ${RATE} req/s with and without a shared limit`);
  await sleep(500);
  const plainRun = await openLoop(urls, plain, RATE, SECONDS);
  await sleep(500);
  const limitedRun = await openLoop(urls, limited, RATE, SECONDS);
  report.sharedLimitLatency = { rate: RATE, plain: plainRun, limited: limitedRun, addedP50Ms: round(limitedRun.p50 - plainRun.p50), addedP99Ms: round(limitedRun.p99 - plainRun.p99) };
  // A rate the nodes cannot sustain measures queueing, not the limit check: say so next to the figure.
  report.sharedLimitLatency.sustained = report.cluster.rps >= RATE;
} finally {
  await Promise.all(nodes.map((n) => n.stop().catch(() => {})));
  await redis.stop();
  await pg.stop();
  mock.stop();
}
report.loadAvgAfter = os.loadavg().map((x) => round(x));

const s = report.single;
const c = report.cluster;
const l = report.sharedLimitLatency;
const md = [
  `| setup | req/s | CPU ms/request | routers' cores | machine busy cores |`,
  `|---|---|---|---|---|`,
  `| 1 node (SQLite, in-process limits) | ${s.rps} | ${s.cpuMsPerRequest} | ${s.routerCores} | ${s.machineBusyCores} |`,
  `| ${NODES} nodes (PostgreSQL + Redis, round-robin) | ${c.rps} | ${c.cpuMsPerRequest} | ${c.routerCores} | ${c.machineBusyCores} |`,
  '',
  `Redis per request (key with a daily limit): ${c.redisRoundTripsPerRequest} round trips on the request path (EVALSHA; the GET/INCRBY/PEXPIRE of the script run inside Redis). Commands counted during the run: ${Object.entries(c.redisCommands).map(([k, v]) => `${k} ${v}`).join(', ')} (zadd/zcard/multi/exec: the nodes' heartbeats).`,
  '',
  `Cache on (the same key in cache mode always, ${report.cacheOn.requests} requests, nearly all hits): ${report.cacheOn.redisRoundTripsPerRequest} round trips per request (the limit check and the cache lookup; a miss's store runs after its reply).`,
  '',
  `Shared limits at ${l.rate} req/s over ${NODES} nodes: p50 ${l.plain.p50} -> ${l.limited.p50} ms (+${l.addedP50Ms}), p90 ${l.plain.p90} -> ${l.limited.p90} ms, p99 ${l.plain.p99} -> ${l.limited.p99} ms (+${l.addedP99Ms}); failed ${l.plain.failed + l.limited.failed}${l.sustained ? '' : ` (NOT sustained: the cluster served ${c.rps} req/s here, so these latencies are queueing; run with a --rate below that)`}.`,
  '',
  `Machine: ${report.cpus} cores, load average ${report.loadAvg.join(' / ')} before, ${report.loadAvgAfter.join(' / ')} after.`,
].join('\n');
process.stdout.write(`${md}\n`);
say('done');
if (!args.includes('--no-save')) {
  const dir = join(ROOT, 'bench', 'results');
  mkdirSync(dir, { recursive: true });
  const file = join(dir, `${new Date().toISOString().replace(/[:.]/g, '-')}-cluster.json`);
  writeFileSync(file, `${JSON.stringify(report, null, 2)}\n`);
  process.stdout.write(`saved ${file}\n`);
}
