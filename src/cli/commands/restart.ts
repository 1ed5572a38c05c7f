import type { Command } from 'commander';
import { examples, withCommon, type CommandContext } from '../common.js';
import { startCommand } from './start.js';
import { stopCommand } from './stop.js';

export function register(program: Command, ctx: CommandContext): void {
  examples(withCommon(program.command('restart')), ['router restart', 'router restart --port 20129'])
    .description('stop the daemon (if running) and start it again')
    .action(
      ctx.run(async (opts) => {
        await stopCommand(opts, ctx.io);
        return startCommand(opts, ctx.io);
      }),
    );
}
