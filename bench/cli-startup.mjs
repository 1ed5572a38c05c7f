#!/usr/bin/env node
/**
 * The CLI's own start-up cost: wall time of `router status` against a running daemon, from spawn to exit,
 * next to a bare `node -e 0` on the same machine (the floor no CLI can go below).
 *
 *   npm run build && node bench/cli-startup.mjs [--runs 30] [--json]
 *
 * Uses hyperfine when it is installed (more careful statistics); otherwise spawns the CLI itself. Exits 1
 * when the median of `router status` is above the budget (300 ms).
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(fileURLToPath(new URL('..', import.meta.url)));
const BIN = join(ROOT, 'bin', 'router.js');
const ENTRY = join(ROOT, 'dist', 'daemon', 'entry.js');
const BUDGET_MS = 300;

const args = process.argv.slice(2);
const runs = Number(args[args.indexOf('--runs') + 1] || 0) || 30;
const asJson = args.includes('--json');

/** Starts the built daemon on port 0 in a temp state folder; resolves once it reports ready over IPC. */
function startDaemon(home) {
  const child = spawn(process.execPath, [ENTRY, '--home', home, '--host', '127.0.0.1', '--port', '0'], {
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
    env: { ...process.env, ROUTER_START_NONCE: 'bench' },
  });
  return new Promise((res, rej) => {
    child.once('message', (m) => (m.type === 'ready' ? res(child) : rej(new Error(JSON.stringify(m)))));
    child.once('exit', (code) => rej(new Error(`daemon exited (${code})`)));
  });
}

function stats(samples) {
  const s = [...samples].sort((a, b) => a - b);
  const at = (p) => s[Math.min(s.length - 1, Math.floor(p * s.length))];
  const mean = s.reduce((a, b) => a + b, 0) / s.length;
  return { runs: s.length, min: s[0], median: at(0.5), p90: at(0.9), max: s[s.length - 1], mean };
}

/** Times `cmd args` `runs` times (after two warm-up runs that fill the OS file cache). */
function time(cmd, argv, env) {
  const samples = [];
  for (let i = 0; i < runs + 2; i++) {
    const t0 = performance.now();
    const r = spawnSync(cmd, argv, { env, stdio: ['ignore', 'pipe', 'pipe'] });
    const dt = performance.now() - t0;
    if (r.status !== 0) throw new Error(`${argv.join(' ')} exited ${r.status}: ${r.stderr}`);
    if (i >= 2) samples.push(dt);
  }
  return stats(samples);
}

function hyperfine(commands, env) {
  if (spawnSync('hyperfine', ['--version']).status !== 0) return undefined;
  const out = join(mkdtempSync(join(tmpdir(), 'router-bench-')), 'hf.json');
  const r = spawnSync('hyperfine', ['--warmup', '3', '--runs', String(runs), '--export-json', out, '-N', ...commands], { env, stdio: 'inherit' });
  if (r.status !== 0) return undefined;
  return out;
}

const home = mkdtempSync(join(tmpdir(), 'router-bench-cli-'));
const env = { ...process.env, ROUTER_HOME: home, ROUTER_CLI_CONFIG_DIR: join(home, 'cli-config') };
delete env.NODE_OPTIONS;
const daemon = await startDaemon(home);
try {
  let result;
  const hf = hyperfine([`${process.execPath} -e 0`, `${process.execPath} ${BIN} status`, `${process.execPath} ${BIN} --version`], env);
  if (hf) {
    const { readFileSync } = await import('node:fs');
    const data = JSON.parse(readFileSync(hf, 'utf8'));
    const ms = (x) => Math.round(x * 10000) / 10;
    const [node, status, version] = data.results.map((r) => ({ runs: r.times.length, min: ms(r.min), median: ms(r.median), mean: ms(r.mean), max: ms(r.max) }));
    result = { tool: 'hyperfine', node, status, version };
  } else {
    result = {
      tool: 'spawnSync',
      node: time(process.execPath, ['-e', '0'], env),
      status: time(process.execPath, [BIN, 'status'], env),
      version: time(process.execPath, [BIN, '--version'], env),
    };
  }
  const round = (o) => Object.fromEntries(Object.entries(o).map(([k, v]) => [k, typeof v === 'number' ? Math.round(v * 10) / 10 : v]));
  const report = { budgetMs: BUDGET_MS, node: process.version, tool: result.tool, 'node -e 0': round(result.node), 'router --version': round(result.version), 'router status': round(result.status) };
  if (asJson) console.log(JSON.stringify(report, null, 2));
  else {
    console.log(`CLI start-up (${result.tool}, ${runs} runs, node ${process.version}); milliseconds, spawn to exit`);
    for (const name of ['node -e 0', 'router --version', 'router status']) {
      const r = report[name];
      console.log(`  ${name.padEnd(17)} min ${String(r.min).padStart(6)}  median ${String(r.median).padStart(6)}  p90 ${String(r.p90 ?? '-').padStart(6)}  max ${String(r.max).padStart(6)}`);
    }
    console.log(`  budget: router status median <= ${BUDGET_MS} ms: ${report['router status'].median <= BUDGET_MS ? 'met' : 'NOT met'}`);
  }
  process.exitCode = report['router status'].median <= BUDGET_MS ? 0 : 1;
} finally {
  daemon.kill('SIGTERM');
  await new Promise((r) => daemon.once('exit', r));
  rmSync(home, { recursive: true, force: true });
}
