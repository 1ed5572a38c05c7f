import { randomBytes } from 'node:crypto';
import { readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Command } from 'commander';
import { DAEMON_NODE_FLAGS, daemonEnv } from '../../shared/daemon-flags.js';
import { createStateFolder } from '../../shared/state-folder.js';
import type { DaemonMessage } from '../../shared/wire.js';
import { isAlive } from '../../shared/pidfile.js';
import { DaemonClient } from '../client.js';
import { CliError, type Io } from '../io.js';
import { rememberAddress, resolveTarget, type CommonOptions, type Target } from '../target.js';
import { withCommon, type CommandContext } from '../common.js';

const ENTRY = fileURLToPath(new URL('../../daemon/entry.js', import.meta.url));
const START_TIMEOUT_MS = 20_000;

/** Last lines of the daemon log, shown when a start fails. */
function logTail(target: Target, lines = 15): string {
  let text = '';
  try {
    text = readFileSync(target.paths.log, 'utf8').trimEnd();
  } catch {
    // no log yet
  }
  return text ? text.split('\n').slice(-lines).join('\n') : '(the log is empty)';
}

/**
 * Serializes starts in one state folder: two `router start` racing must not spawn two daemons. The lock
 * holds the starter's pid; a lock whose holder is gone is stale and taken over.
 */
async function withStartLock<T>(file: string, fn: () => Promise<T>): Promise<T> {
  const deadline = Date.now() + START_TIMEOUT_MS + 5_000;
  for (;;) {
    try {
      writeFileSync(file, String(process.pid), { flag: 'wx', mode: 0o600 });
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const holder = Number(readFileSync(file, 'utf8') || 0);
      if (!holder || !isAlive(holder)) {
        try {
          unlinkSync(file);
        } catch {
          // another starter removed it
        }
        continue;
      }
      if (Date.now() > deadline) throw new CliError('another `router start` is still running for this state folder.');
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  try {
    return await fn();
  } finally {
    try {
      unlinkSync(file);
    } catch {
      // already gone
    }
  }
}

/** Options of `router start` that the daemon reads from its environment (a key or URL in argv would show in `ps`). */
export interface ClusterStartOptions {
  nodeId?: string;
  secretKeyFile?: string;
  /** Redis of the hot shared state (env ROUTER_REDIS_URL). */
  redisUrl?: string;
  /** PostgreSQL of the shared durable state (env ROUTER_DATABASE_URL). */
  databaseUrl?: string;
}

/** The environment variables `router start`'s cluster options become for the daemon process. */
export function clusterEnv(opts: ClusterStartOptions): Record<string, string> {
  const env: Record<string, string> = {};
  if (opts.nodeId !== undefined) env.ROUTER_NODE_ID = opts.nodeId;
  if (opts.secretKeyFile !== undefined) env.ROUTER_SECRET_KEY_FILE = resolve(opts.secretKeyFile);
  if (opts.redisUrl !== undefined) env.ROUTER_REDIS_URL = opts.redisUrl;
  if (opts.databaseUrl !== undefined) env.ROUTER_DATABASE_URL = opts.databaseUrl;
  return env;
}

/** Spawns the detached daemon and waits for its nonce-stamped IPC message. */
async function spawnDaemon(target: Target, extraEnv: Record<string, string>): Promise<DaemonMessage & { exited: Promise<unknown> }> {
  // execa is loaded here only: importing it costs start-up time every other command would pay.
  const { execa } = await import('execa');
  const nonce = randomBytes(16).toString('hex');
  const child = execa(process.execPath, [...DAEMON_NODE_FLAGS, ENTRY, '--home', target.paths.home, '--host', target.host, '--port', String(target.port)], {
    detached: true,
    cleanup: false,
    reject: false,
    ipc: true,
    serialization: 'json',
    stdin: 'ignore',
    stdout: 'ignore',
    // The daemon logs to its own file (fatal errors included); a piped stderr would keep this CLI alive.
    stderr: 'ignore',
    env: { ...daemonEnv(), ...extraEnv, ROUTER_START_NONCE: nonce },
  });
  const exited = child.then((r) => ({ type: 'exit' as const, code: r.exitCode, signal: r.signal }));
  const message = child
    .getOneMessage({ filter: (m: unknown) => (m as DaemonMessage)?.nonce === nonce })
    .then((m: unknown) => m as DaemonMessage)
    .catch(() => undefined);
  const timeout = new Promise<{ type: 'timeout' }>((r) => setTimeout(() => r({ type: 'timeout' }), START_TIMEOUT_MS).unref());
  const first = await Promise.race([message, exited, timeout]);
  if (first && first.type === 'exit') {
    const again = await Promise.race([message, new Promise<undefined>((r) => setTimeout(r, 200))]);
    if (again) return { ...(again as DaemonMessage), exited };
    throw new CliError(`the router daemon exited during start (${first.signal ?? `code ${first.code}`}).`, 1, logTail(target));
  }
  if (!first || first.type === 'timeout') {
    child.kill('SIGKILL');
    throw new CliError('the router daemon did not become ready in time.', 1, logTail(target));
  }
  child.disconnect();
  // A daemon that reported an error exits once the IPC channel closes; the caller waits for that.
  if ((first as DaemonMessage).type !== 'error') child.unref();
  return { ...(first as DaemonMessage), exited };
}

/** What `start` prints: `{url, pid}` with --json (plus `alreadyRunning`), else one line. */
function startedLine(opts: { json?: boolean }, d: { url: string; pid: number }, already: boolean): string {
  if (opts.json) return JSON.stringify(already ? { url: d.url, pid: d.pid, alreadyRunning: true } : { url: d.url, pid: d.pid });
  return already ? `router is already running at ${d.url} (pid ${d.pid})` : `router started at ${d.url} (pid ${d.pid})`;
}

/** Starts the daemon (detached unless --foreground) and returns once it answers /api/health. */
export async function startCommand(opts: CommonOptions & ClusterStartOptions & { foreground?: boolean; json?: boolean }, io: Io): Promise<number> {
  const target = resolveTarget(opts);
  if (opts.foreground) return runForeground(opts, io);
  // A first start on a fresh machine: the state folder (and its parents) may not exist yet, and the start
  // lock lives inside it.
  try {
    createStateFolder(target.paths.home);
  } catch (err) {
    throw new CliError(`cannot create the state folder ${target.paths.home}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
  return withStartLock(target.paths.startLock, async () => {
    const current = resolveTarget(opts);
    if (current.running) {
      io.out(startedLine(opts, current.running, true));
      return 0;
    }
    const msg = await spawnDaemon(current, clusterEnv(opts));
    if (msg.type === 'error') {
      // The daemon exits after reporting; wait for that (bounded), so no half-started process outlives this command.
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([msg.exited, new Promise((r) => (timer = setTimeout(r, 5_000)))]);
      clearTimeout(timer);
      throw new CliError(`could not start: ${msg.message}`, 1, logTail(current));
    }
    if (msg.type === 'already-running') {
      io.out(startedLine(opts, msg, true));
      return 0;
    }
    const client = new DaemonClient({ ...resolveTarget(opts), url: msg.url }, io.err);
    await client.request('GET', '/api/health');
    rememberAddress(opts, current);
    io.out(startedLine(opts, msg, false));
    return 0;
  });
}

/**
 * Runs the daemon's own entry as a child that shares this terminal (its log is echoed to stdout) and waits
 * for it to end. The child has its own process group, so a Ctrl-C reaches it once, forwarded from here
 * (twice would skip the graceful stop). The CLI never loads daemon code itself.
 */
async function runForeground(opts: CommonOptions & ClusterStartOptions & { json?: boolean }, io: Io): Promise<number> {
  const { spawn } = await import('node:child_process');
  const target = resolveTarget(opts);
  const nonce = randomBytes(16).toString('hex');
  createStateFolder(target.paths.home);
  const child = spawn(
    process.execPath,
    [...DAEMON_NODE_FLAGS, ENTRY, '--foreground', '--home', target.paths.home, '--host', target.host, '--port', String(target.port)],
    // With --json, stdout carries the one JSON object; the echoed log goes to stderr instead.
    { stdio: ['ignore', opts.json ? 2 : 'inherit', 'inherit', 'ipc'], detached: true, env: { ...process.env, ...daemonEnv(), ...clusterEnv(opts), ROUTER_START_NONCE: nonce } },
  );
  const exited = new Promise<number>((resolve) => child.once('exit', (code, signal) => resolve(code ?? (signal ? 128 : 1))));
  const forward = (sig: NodeJS.Signals) => () => child.kill(sig);
  const handlers = (['SIGINT', 'SIGTERM', 'SIGHUP'] as const).map((sig) => [sig, forward(sig)] as const);
  for (const [sig, fn] of handlers) process.on(sig, fn);
  try {
    const msg = await new Promise<DaemonMessage | undefined>((resolve) => {
      child.on('message', (m: DaemonMessage) => m?.nonce === nonce && resolve(m));
      void exited.then(() => resolve(undefined));
    });
    if (!msg) throw new CliError(`the router daemon exited during start (code ${await exited}).`, 1, logTail(target));
    if (msg.type === 'error') {
      await exited;
      throw new CliError(`could not start: ${msg.message}`, 1, logTail(target));
    }
    if (msg.type === 'already-running') {
      io.out(opts.json ? JSON.stringify({ url: msg.url, pid: msg.pid, alreadyRunning: true }) : `router is already running at ${msg.url} (pid ${msg.pid})`);
      await exited;
      return 0;
    }
    rememberAddress(opts, target);
    io.out(opts.json ? JSON.stringify({ url: msg.url, pid: msg.pid }) : `router running in the foreground at ${msg.url} (pid ${msg.pid}); Ctrl-C stops it`);
    child.disconnect();
    return await exited;
  } finally {
    for (const [sig, fn] of handlers) process.off(sig, fn);
  }
}

export function register(program: Command, ctx: CommandContext): void {
  withCommon(program.command('start'))
    .description('start the router daemon (detached) and wait until it is ready')
    .option('--foreground', 'run in this terminal instead of detaching (its log is printed here; Ctrl-C stops it)')
    .option('--json', 'print {url, pid} (and alreadyRunning: true when it was)')
    .option('--node-id <id>', "this daemon's id in a cluster (env ROUTER_NODE_ID; default: generated once and kept in the state folder)")
    .option('--secret-key-file <file>', 'the key that seals credentials, shared by every node of a cluster: 32 bytes or 64 hex characters (env ROUTER_SECRET_KEY_FILE, or ROUTER_SECRET_KEY with the hex key)')
    .option('--redis-url <url>', 'cluster mode: Redis/Valkey holding limits, budgets, cooldowns and circuits shared with the other routers (env ROUTER_REDIS_URL)')
    .option('--database-url <url>', 'cluster mode: PostgreSQL 15+ holding the records shared with the other routers, postgres://user:password@host/db (env ROUTER_DATABASE_URL)')
    .addHelpText('after', '\nExamples:\n  router start\n  router start --port 20129 --home ./state\n  router start --foreground\n  router start --node-id gw-1 --secret-key-file /etc/router/secret.key\n  router start --redis-url redis://:password@10.0.0.5:6379\n  router start --database-url postgres://router:password@10.0.0.5/router --secret-key-file /etc/router/secret.key')
    .action(ctx.run((opts) => startCommand(opts, ctx.io)));
}
