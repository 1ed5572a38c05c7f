import type { Command } from 'commander';
import { isAlive, releasePidFile } from '../../shared/pidfile.js';
import type { ShutdownReply } from '../../shared/wire.js';
import { DaemonClient } from '../client.js';
import { CliError, type Io } from '../io.js';
import { resolveTarget, type CommonOptions } from '../target.js';
import { examples, withCommon, type CommandContext } from '../common.js';

const STOP_TIMEOUT_MS = 20_000;

async function waitGone(pid: number, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (!isAlive(pid)) return true;
    await new Promise((r) => setTimeout(r, 50));
  }
  return !isAlive(pid);
}

/**
 * Stops the daemon gracefully through its shutdown route (it finishes in-flight requests and closes the
 * database); falls back to SIGTERM when the route cannot be reached, and to SIGKILL after the bound.
 */
export async function stopCommand(opts: CommonOptions & { json?: boolean }, io: Io): Promise<number> {
  const target = resolveTarget(opts);
  if (!target.running) {
    if (target.stale) releasePidFile(target.paths.pid, target.stale.pid);
    io.out(opts.json ? JSON.stringify({ stopped: false, pid: null }) : 'router is not running');
    return 0;
  }
  const { pid } = target.running;
  try {
    const r = await new DaemonClient(target, io.err).request<ShutdownReply>('POST', '/api/system/shutdown', undefined, 5_000);
    // Say what the wait is for: a stop that takes seconds should not look like a hang.
    if (r.inFlight > 0) {
      const streams = r.openStreams > 0 ? ` (${r.openStreams} streaming)` : '';
      io.err(`waiting for ${r.inFlight} in-flight request${r.inFlight === 1 ? '' : 's'}${streams} to finish, up to ${Math.round(r.graceMs / 1000)} s...`);
    }
  } catch {
    process.kill(pid, 'SIGTERM');
  }
  if (!(await waitGone(pid, STOP_TIMEOUT_MS))) {
    process.kill(pid, 'SIGKILL');
    if (!(await waitGone(pid, 2_000))) throw new CliError(`router (pid ${pid}) did not stop.`);
    releasePidFile(target.paths.pid, pid);
    io.err(`router (pid ${pid}) did not stop in time and was killed.`);
  }
  io.out(opts.json ? JSON.stringify({ stopped: true, pid }) : `router stopped (pid ${pid})`);
  return 0;
}

export function register(program: Command, ctx: CommandContext): void {
  examples(withCommon(program.command('stop')), ['router stop', 'router stop --home ./state'])
    .description('stop the router daemon gracefully (in-flight requests finish first, up to 10 s)')
    .option('--json', 'print {stopped, pid}')
    .action(ctx.run((opts) => stopCommand(opts, ctx.io)));
}
