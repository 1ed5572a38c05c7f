#!/usr/bin/env node
// Usage-recording overhead: req/s of the real daemon (dist/) with usage recording on, against the same
// build with the queue disabled (ROUTER_USAGE_DISABLED=1 read at boot). Not a test.
//
//   npx tsc -p tsconfig.json && node bench/usage-overhead.mjs [--seconds 8] [--connections 32] [--rounds 2] [--stream]
//
// Each round starts one daemon per mode on a temp home (rounds interleave off/on to spread machine noise),
// points an OpenAI connection at a canned mock upstream (its own process), warms up, then drives
// POST /v1/chat/completions with an undici Pool for the given time and counts completed 200s. Prints
// per-round and median req/s and the relative difference.
import { fork, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
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
const SECONDS = opt('seconds', 8);
const CONNECTIONS = opt('connections', 32);
const ROUNDS = opt('rounds', 2);
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

async function measure(mock, disabled) {
  const d = await startDaemon(disabled);
  try {
    const { key } = await d.manage('POST', '/api/keys', { name: 'bench', scopes: ['proxy'] });
    await d.manage('POST', '/api/providers', { provider: 'openai', apiKey: 'sk-bench', providerSpecificData: { baseUrl: `http://127.0.0.1:${mock.port}/v1` } });
    await drive(d.url, key, Math.min(3, SECONDS)); // warm-up (JIT, keep-alive pools)
    const r = await drive(d.url, key, SECONDS);
    if (!disabled) {
      const s = await d.manage('GET', '/api/usage/summary');
      r.rows = s.requests;
    }
    return r;
  } finally {
    await d.stop();
  }
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)];

const mock = await startMock();
const results = { off: [], on: [] };
try {
  for (let round = 1; round <= ROUNDS; round++) {
    for (const mode of round % 2 ? ['off', 'on'] : ['on', 'off']) {
      const r = await measure(mock, mode === 'off');
      results[mode].push(r.rps);
      console.log(
        `round ${round} usage ${mode.padEnd(3)}: ${r.rps.toFixed(0).padStart(6)} req/s (${r.ok} ok, ${r.failed} failed${r.rows !== undefined ? `, ${r.rows} usage rows` : ''})`,
      );
    }
  }
} finally {
  mock.stop();
}
const off = median(results.off);
const on = median(results.on);
console.log(`\n${STREAM ? 'streamed' : 'non-streamed'} chat, ${CONNECTIONS} connections, ${SECONDS}s per run, ${ROUNDS} rounds`);
console.log(`median req/s  usage off (ROUTER_USAGE_DISABLED=1): ${off.toFixed(0)}`);
console.log(`median req/s  usage on:                            ${on.toFixed(0)}`);
console.log(`difference: ${(((on - off) / off) * 100).toFixed(1)}%`);
