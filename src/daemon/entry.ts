import type { DaemonMessage } from '../shared/wire.js';
import { resolveHome, statePaths } from '../shared/paths.js';
import { runDaemon } from './main.js';
import { closeUpstreams } from './net/upstream.js';
import { installSafetyNet } from './system/safety-net.js';

/**
 * Entry point of the daemon process, spawned by `router start` (detached) or `router start --foreground`
 * (a child of the CLI that shares its terminal: `--foreground` echoes the log to stdout).
 */
export async function daemonMain(): Promise<void> {
  const args = process.argv.slice(2);
  const foreground = args.includes('--foreground');
  const flag = (name: string) => {
    const i = args.indexOf(name);
    return i >= 0 ? args[i + 1] : undefined;
  };
  // A detached daemon has no terminal: errors nothing caught go to its log file (and to stderr in the
  // foreground). Fatal until the daemon serves; contained (logged, the daemon keeps serving) after.
  const net = installSafetyNet(statePaths(resolveHome(flag('--home'))).log, { echo: foreground });
  const nonce = process.env.ROUTER_START_NONCE ?? '';
  delete process.env.ROUTER_START_NONCE;
  const send = (msg: DaemonMessage) => (process.send ? process.send(msg) : undefined);
  const outcome = await runDaemon({ home: flag('--home'), host: flag('--host'), port: flag('--port'), foreground, redisUrl: flag('--redis-url'), databaseUrl: flag('--database-url') });
  if (outcome.kind === 'failed') {
    send({ type: 'error', nonce, message: outcome.message });
    process.exitCode = 1;
    return;
  }
  if (outcome.kind === 'already-running') {
    send({ type: 'already-running', nonce, pid: outcome.pid, url: outcome.url });
    return;
  }
  net.contain();
  send({ type: 'ready', nonce, pid: outcome.pid, url: outcome.url });
  // The starter disconnects after reading this; the daemon then lives on its own.
  process.on('disconnect', () => {});
  await outcome.stopped;
  // Pooled upstream connections (direct and through outbound proxies) end with a close, not a reset. Here,
  // where the process ends: an in-process daemon (tests) leaves the shared pool to the next one.
  await Promise.race([closeUpstreams().catch(() => undefined), new Promise((r) => setTimeout(r, 1000).unref())]);
  process.exit(0);
}


daemonMain().catch((err) => {
  process.stderr.write(`router daemon: ${(err as Error).message}\n`);
  process.exit(1);
});
