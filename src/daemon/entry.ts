import type { DaemonMessage } from '../shared/wire.js';
import { appendFileSync } from 'node:fs';
import { resolveHome, statePaths } from '../shared/paths.js';
import { runDaemon } from './main.js';

/** A detached daemon has no terminal: fatal errors go to its log file, synchronously, before exiting. */
function installFatalHandlers(): void {
  const args = process.argv.slice(2);
  const i = args.indexOf('--home');
  const log = statePaths(resolveHome(i >= 0 ? args[i + 1] : undefined)).log;
  const fatal = (kind: string) => (err: unknown) => {
    try {
      appendFileSync(log, `${new Date().toISOString()} FATAL ${kind}: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    } finally {
      process.exit(70);
    }
  };
  process.on('uncaughtException', fatal('uncaught exception'));
  process.on('unhandledRejection', fatal('unhandled rejection'));
}

/** Entry point of the detached daemon process (spawned by `router start`). */
export async function daemonMain(): Promise<void> {
  installFatalHandlers();
  const args = process.argv.slice(2);
  const flag = (name: string) => {
    const i = args.indexOf(name);
    return i >= 0 ? args[i + 1] : undefined;
  };
  const nonce = process.env.ROUTER_START_NONCE ?? '';
  delete process.env.ROUTER_START_NONCE;
  const send = (msg: DaemonMessage) => (process.send ? process.send(msg) : undefined);
  const outcome = await runDaemon({ home: flag('--home'), host: flag('--host'), port: flag('--port') });
  if (outcome.kind === 'failed') {
    send({ type: 'error', nonce, message: outcome.message });
    process.exitCode = 1;
    return;
  }
  if (outcome.kind === 'already-running') {
    send({ type: 'already-running', nonce, pid: outcome.pid, url: outcome.url });
    return;
  }
  send({ type: 'ready', nonce, pid: outcome.pid, url: outcome.url });
  // The starter disconnects after reading this; the daemon then lives on its own.
  process.on('disconnect', () => {});
  await outcome.stopped;
  process.exit(0);
}


daemonMain().catch((err) => {
  process.stderr.write(`router daemon: ${(err as Error).message}\n`);
  process.exit(1);
});
