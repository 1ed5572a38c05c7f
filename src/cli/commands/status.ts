import type { Command } from 'commander';
import type { StatusReply } from '../../shared/wire.js';
import { DaemonClient } from '../client.js';
import type { Io } from '../io.js';
import { resolveTarget, type CommonOptions } from '../target.js';
import { examples, withCommon, type CommandContext } from '../common.js';

const NOT_RUNNING: StatusReply = { running: false, pid: null, url: null, version: null, uptimeSeconds: null };

function uptime(s: number): string {
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m ${s % 60}s`;
  return `${Math.floor(s / 3600)}h ${Math.floor((s % 3600) / 60)}m`;
}

/** Prints whether the daemon runs. Exit 0 when running, 1 when not (so scripts can test it). */
export async function statusCommand(opts: CommonOptions & { json?: boolean }, io: Io): Promise<number> {
  const target = resolveTarget(opts);
  let status = NOT_RUNNING;
  if (target.running) {
    try {
      status = await new DaemonClient(target, io.err).request<StatusReply>('GET', '/api/system/status', undefined, 5_000);
    } catch {
      status = NOT_RUNNING;
    }
  }
  if (opts.json) io.out(JSON.stringify(status));
  else if (status.running) {
    io.out(`router is running at ${status.url} (pid ${status.pid}, version ${status.version}, up ${uptime(status.uptimeSeconds ?? 0)})`);
  } else io.out('router is not running');
  return status.running ? 0 : 1;
}

export function register(program: Command, ctx: CommandContext): void {
  examples(withCommon(program.command('status')), ['router status', 'router status --json', 'router status >/dev/null && echo up   # exit 1 when not running'])
    .description('show whether the daemon is running')
    .option('--json', 'print {running, pid, url, version, uptimeSeconds}')
    .action(ctx.run((opts) => statusCommand(opts, ctx.io)));
}
