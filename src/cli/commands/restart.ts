import type { Command } from 'commander';
import { examples, withCommon, type CommandContext } from '../common.js';
import { startCommand } from './start.js';
import { stopCommand } from './stop.js';

export function register(program: Command, ctx: CommandContext): void {
  examples(withCommon(program.command('restart')), ['router restart', 'router restart --port 20129'])
    .description('stop the daemon (if running) and start it again')
    .option('--json', 'print {url, pid} of the new daemon')
    .action(
      ctx.run(async (opts) => {
        // With --json only the start's object is printed, so the output is one JSON value.
        await stopCommand({ ...opts, json: false }, opts.json ? { ...ctx.io, out: () => {} } : ctx.io);
        return startCommand(opts, ctx.io);
      }),
    );
}
