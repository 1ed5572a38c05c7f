import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import type { DaemonMessage } from '../../shared/wire.js';
import type { Logger } from '../logger.js';

const READY_TIMEOUT_MS = 30_000;

/** What the stopping daemon hands its successor: the address it listened on and how it ran. */
export interface SuccessorOptions {
  home: string;
  host: string;
  port: number;
  foreground: boolean;
  log: Logger;
}

/**
 * Starts the daemon again as a new process (Node cannot exec in place before v22.15): same Node flags,
 * same entry, same state folder and the port this one actually listened on, after this one has closed its
 * listener, its database and its pid file. Resolves once the successor reported ready (or failed). A
 * detached daemon's successor is detached too; a foreground one shares the terminal, and this process
 * stays as its parent (forwarding signals) until it exits, so `router start --foreground` keeps waiting.
 */
export async function spawnSuccessor(o: SuccessorOptions): Promise<{ ok: boolean; pid?: number; exited?: Promise<void> }> {
  const nonce = randomBytes(16).toString('hex');
  const args = [...process.execArgv, process.argv[1]!, '--home', o.home, '--host', o.host, '--port', String(o.port)];
  if (o.foreground) args.push('--foreground');
  const child = spawn(process.execPath, args, {
    detached: !o.foreground,
    stdio: o.foreground ? ['ignore', 'inherit', 'inherit', 'ipc'] : ['ignore', 'ignore', 'ignore', 'ipc'],
    env: { ...process.env, ROUTER_START_NONCE: nonce, ROUTER_RESTARTED_FROM: String(process.pid) },
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const first = await new Promise<DaemonMessage | { type: 'exit' } | { type: 'timeout' }>((resolve) => {
    const timer = setTimeout(() => resolve({ type: 'timeout' }), READY_TIMEOUT_MS);
    child.on('message', (m: DaemonMessage) => {
      if (m?.nonce !== nonce) return;
      clearTimeout(timer);
      resolve(m);
    });
    void exited.then(() => {
      clearTimeout(timer);
      resolve({ type: 'exit' });
    });
  });
  if (first.type !== 'ready') {
    const why = first.type === 'error' ? first.message : first.type === 'exit' ? 'it exited during start' : first.type === 'timeout' ? 'it did not become ready in time' : `another daemon holds the state folder (pid ${(first as { pid: number }).pid})`;
    o.log.error('restart failed: the new daemon did not start; run `router start`', { reason: why });
    if (first.type === 'timeout') child.kill('SIGKILL');
    return { ok: false };
  }
  o.log.info('restarted: the new daemon is ready', { pid: first.pid, url: first.url });
  child.disconnect();
  if (!o.foreground) {
    child.unref();
    return { ok: true, pid: first.pid };
  }
  const forward = (sig: NodeJS.Signals) => () => child.kill(sig);
  for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(sig, forward(sig));
  return { ok: true, pid: first.pid, exited };
}
