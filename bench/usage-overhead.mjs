#!/usr/bin/env node
// Usage-recording overhead: req/s of the real daemon (dist/) with usage recording on, against the same
// build with the queue disabled (ROUTER_USAGE_DISABLED=1 read at boot). Not a test.
//
//   npx tsc -p tsconfig.json && node bench/usage-overhead.mjs [--seconds 12] [--rounds 6] [--connections 16] [--stream]
//
// Starts one daemon per mode side by side on temp homes, each with an OpenAI connection pointed at a
// canned mock upstream (its own process), warms both up, then drives POST /v1/chat/completions with an
// undici Pool in alternating slices (`--rounds` pairs sharing `--seconds` per mode), so both modes see the
// same background load. Prints req/s per mode and (Linux) the daemon's CPU time per request, which is the
// steadier figure on a shared machine: throughput there mostly measures the neighbours.
import { fork, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Pool } from 'undici';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const ENTRY = join(ROOT, 'dist/daemon/entry.js');
const { deriveCliToken } = await import(pathToFileURL(join(ROOT, 'dist/shared/cli-token.js')).href);

const args = process.argv.slice(2);
const opt = (name, def) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? Number(args[i + 1]) : def;
};
const SECONDS = opt('seconds', 12);
const CONNECTIONS = opt('connections', 16);
const ROUNDS = opt('rounds', 6);
const STREAM = args.includes('--stream');

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

function startMock() {
  const child = spawn(process.execPath, ['--input-type=module', '-e', MOCK], { stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
  return new Promise((resolve) => child.once('message', (m) => resolve({ port: m.port, stop: () => child.kill() })));
}

async function startDaemon(disabled) {
  const home = mkdtempSync(join(tmpdir(), 'router-bench-usage-'));
  const env = { ...process.env, ROUTER_START_NONCE: 'bench' };
  if (disabled) env.ROUTER_USAGE_DISABLED = '1';
  else delete env.ROUTER_USAGE_DISABLED;
  const child = fork(ENTRY, ['--home', home, '--host', '127.0.0.1', '--port', '0'], { env, stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
  const msg = await new Promise((resolve, reject) => {
    child.once('message', resolve);
    child.once('exit', (code) => reject(new Error(`daemon exited with ${code}`)));
  });
  if (msg.type !== 'ready') throw new Error(`daemon did not start: ${JSON.stringify(msg)}`);
  child.disconnect();
  const url = msg.url;
  const cli = deriveCliToken(join(home, 'cli-token.salt'));
  const manage = async (method, path, body) => {
    const r = await fetch(`${url}${path}`, {
      method,
      headers: { 'x-router-cli-token': cli, 'content-type': 'application/json' },
      body: body ? JSON.stringify(body) : undefined,
    });
    return r.json();
  };
  return {
    url,
    manage,
    pid: child.pid,
    async stop() {
      await manage('POST', '/api/system/shutdown').catch(() => child.kill('SIGTERM'));
      await new Promise((r) => (child.exitCode !== null ? r() : child.once('exit', r)));
      rmSync(home, { recursive: true, force: true });
    },
  };
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
  const worker = async () => {
    while (performance.now() < until) {
      try {
        const r = await pool.request({ method: 'POST', path: '/v1/chat/completions', headers, body });
        await r.body.text();
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
  return { rps: ok / elapsed, ok, failed };
}

/** Starts a daemon in one mode with a key and an OpenAI connection pointed at the mock. */
async function prepare(mock, disabled) {
  const d = await startDaemon(disabled);
  const { key } = await d.manage('POST', '/api/keys', { name: 'bench', scopes: ['proxy'] });
  await d.manage('POST', '/api/providers', { provider: 'openai', apiKey: 'sk-bench', providerSpecificData: { baseUrl: `http://127.0.0.1:${mock.port}/v1` } });
  return { d, key };
}

/** CPU time (user + system) of a process in ms, from /proc; undefined elsewhere. */
function cpuMs(pid) {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100; // utime, stime in clock ticks (100 Hz)
  } catch {
    return undefined;
  }
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)];

const mock = await startMock();
// Both daemons run side by side and are driven in alternating slices, so both modes see the same
// background load (a shared machine changes speed from one second to the next).
const modes = { off: await prepare(mock, true), on: await prepare(mock, false) };
const totals = { off: { ok: 0, failed: 0, secs: 0, cpu: 0 }, on: { ok: 0, failed: 0, secs: 0, cpu: 0 } };
const perRound = { off: [], on: [] };
try {
  for (const m of ['off', 'on']) await drive(modes[m].d.url, modes[m].key, Math.min(3, SECONDS)); // warm-up
  const slice = SECONDS / ROUNDS;
  for (let round = 1; round <= ROUNDS * 2; round++) {
    for (const m of round % 2 ? ['off', 'on'] : ['on', 'off']) {
      const { d, key } = modes[m];
      const cpu0 = cpuMs(d.pid);
      const r = await drive(d.url, key, slice);
      // Let the once-a-second flush of this slice's rows land inside the measurement.
      await new Promise((res) => setTimeout(res, 1100));
      const cpu1 = cpuMs(d.pid);
      const t = totals[m];
      t.ok += r.ok;
      t.failed += r.failed;
      t.secs += slice;
      if (cpu0 !== undefined && cpu1 !== undefined) t.cpu += cpu1 - cpu0;
      perRound[m].push(r.rps);
    }
  }
  const s = await modes.on.d.manage('GET', '/api/usage/summary');
  console.log(`usage rows written by the "on" daemon: ${s.requests} (${s.estimated} estimated)`);
} finally {
  await Promise.all(Object.values(modes).map((m) => m.d.stop()));
  mock.stop();
}
console.log(`${STREAM ? 'streamed' : 'non-streamed'} chat, ${CONNECTIONS} connections, ${SECONDS * 2}s per mode in ${ROUNDS * 2} alternating slices`);
for (const m of ['off', 'on']) {
  const t = totals[m];
  console.log(
    `usage ${m.padEnd(3)}${m === 'off' ? ' (ROUTER_USAGE_DISABLED=1)' : '                          '}: ${(t.ok / t.secs).toFixed(0).padStart(5)} req/s (median slice ${median(perRound[m]).toFixed(0)}), ` +
      `${t.cpu ? ((t.cpu * 1000) / t.ok).toFixed(0) : '?'} us daemon CPU per request, ${t.failed} failed`,
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
