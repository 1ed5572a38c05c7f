/**
 * Helpers for end-to-end tests of the real `router` CLI and daemon: run the built CLI in a child process
 * with a throwaway state folder, find free ports, and make sure no daemon outlives its test.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { execa } from 'execa';

export const REPO_ROOT = resolve(fileURLToPath(new URL('../..', import.meta.url)));
export const BIN = join(REPO_ROOT, 'bin', 'router.js');
export const PACKAGE_VERSION: string = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')).version;

export interface CliResult {
  exitCode: number;
  stdout: string;
  stderr: string;
}

/** The environment the CLI runs with: ours, minus anything that would point it at a real installation. */
function cliEnv(extra: Record<string, string> = {}): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined) env[k] = v;
  for (const k of ['ROUTER_HOME', 'ROUTER_HOST', 'ROUTER_PORT', 'ROUTER_DEBUG', 'NODE_OPTIONS']) delete env[k];
  return { ...env, ...extra };
}

/**
 * Runs `node bin/router.js ...args` and returns its exit code and output. A run that passes `timeoutMs` is
 * killed and fails the test with both streams in the message, so a hang shows what the CLI was doing.
 */
export async function runRouter(
  args: string[],
  opts: { timeoutMs?: number; env?: Record<string, string>; input?: string } = {},
): Promise<CliResult> {
  const timeoutMs = opts.timeoutMs ?? 25_000;
  const r = await execa(process.execPath, [BIN, ...args], {
    cwd: REPO_ROOT,
    env: cliEnv(opts.env),
    extendEnv: false,
    reject: false,
    timeout: timeoutMs,
    ...(opts.input === undefined ? { stdin: 'ignore' as const } : { input: opts.input }),
  });
  const stdout = String(r.stdout ?? '');
  const stderr = String(r.stderr ?? '');
  if (r.timedOut) {
    throw new Error(
      `router ${args.join(' ')} did not finish within ${timeoutMs} ms\n--- stdout ---\n${stdout}\n--- stderr ---\n${stderr}`,
    );
  }
  return { exitCode: r.exitCode ?? -1, stdout, stderr };
}

/** Formats a result for assertion messages. */
export function describeResult(r: CliResult): string {
  return `exit ${r.exitCode}\n--- stdout ---\n${r.stdout}\n--- stderr ---\n${r.stderr}`;
}

/** A port nothing listens on right now (bound to 0, read, released). */
export function freePort(host = '127.0.0.1'): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const srv = createServer();
    srv.unref();
    srv.once('error', reject);
    srv.listen(0, host, () => {
      const addr = srv.address();
      const port = typeof addr === 'object' && addr ? addr.port : 0;
      srv.close(() => resolvePort(port));
    });
  });
}

const homes = new Set<string>();
const pids = new Set<number>();

/** A fresh state folder, removed (after its daemon is killed) by `cleanupAll`. */
export function tempHome(prefix = 'router-test-'): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  homes.add(dir);
  return dir;
}

/** Remembers a daemon pid seen in output, in case its pid file is gone by cleanup time. */
export function trackPid(pid: number): void {
  if (Number.isInteger(pid) && pid > 0) pids.add(pid);
}

/** The pid recorded in a state folder's pid file, if any. */
export function readPid(home: string): number | undefined {
  try {
    const pid = (JSON.parse(readFileSync(join(home, 'router.pid'), 'utf8')) as { pid: number }).pid;
    return Number.isInteger(pid) ? pid : undefined;
  } catch {
    return undefined;
  }
}

/** True while the process exists and has not exited (a zombie awaiting its reaper counts as gone). */
export function processRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.charAt(stat.lastIndexOf(')') + 2) !== 'Z';
  } catch {
    return process.platform !== 'linux';
  }
}

/** Only kill processes that are really router daemons: a recorded pid may have been reused by now. */
function isRouterDaemon(pid: number): boolean {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(join('daemon', 'entry.js'));
  } catch {
    return process.platform !== 'linux';
  }
}

/** Polls until the process is gone; false when it is still there after `ms`. */
export async function waitForExit(pid: number, ms = 15_000): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (!processRunning(pid)) return true;
    await new Promise((r) => setTimeout(r, 25));
  }
  return !processRunning(pid);
}

/** SIGKILLs a daemon pid (only if it is one) and waits for it to go. */
export async function killDaemonPid(pid: number): Promise<void> {
  if (pid === process.pid || !processRunning(pid) || !isRouterDaemon(pid)) return;
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    return;
  }
  await waitForExit(pid, 3_000);
}

/** Kills the daemon recorded in a home's pid file, if it is still running. */
export async function killDaemonOf(home: string): Promise<void> {
  const pid = readPid(home);
  if (pid !== undefined) await killDaemonPid(pid);
}

/** Kills the daemons of one temp home and removes it. Safe for concurrent tests (touches only this home). */
export async function cleanupHome(home: string): Promise<void> {
  await killDaemonOf(home);
  for (const pid of daemonsOf(home)) await killDaemonPid(pid);
  rmSync(home, { recursive: true, force: true });
  homes.delete(home);
}

/** Kills every daemon of every temp home and tracked pid, then removes the homes. For afterEach/afterAll. */
export async function cleanupAll(): Promise<void> {
  for (const home of homes) {
    await killDaemonOf(home);
    for (const pid of daemonsOf(home)) await killDaemonPid(pid);
  }
  for (const pid of pids) await killDaemonPid(pid);
  for (const home of homes) rmSync(home, { recursive: true, force: true });
  homes.clear();
  pids.clear();
}

/** Pulls `(pid N)` out of a start/stop line, and tracks it for cleanup. */
export function pidFromOutput(text: string): number | undefined {
  const m = /\(pid (\d+)\)/.exec(text);
  if (!m) return undefined;
  const pid = Number(m[1]);
  trackPid(pid);
  return pid;
}

/** Pulls the first http URL out of CLI output. */
export function urlFromOutput(text: string): string | undefined {
  return /https?:\/\/[^\s)]+/.exec(text)?.[0];
}

/** Pids of live router daemons started for this state folder (found through /proc; Linux only). */
export function daemonsOf(home: string): number[] {
  if (process.platform !== 'linux') return [];
  const out: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const argv = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0');
      const i = argv.indexOf('--home');
      if (argv.some((a) => a.endsWith(join('daemon', 'entry.js'))) && i >= 0 && resolve(argv[i + 1] ?? '') === resolve(home)) {
        if (processRunning(Number(entry))) out.push(Number(entry));
      }
    } catch {
      // the process ended while we looked
    }
  }
  return out;
}
