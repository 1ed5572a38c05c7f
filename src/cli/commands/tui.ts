import type { Command } from 'commander';
import { examples, withCommon, type CommandContext } from '../common.js';

/** `router inspect` and `router dashboard`: the TUIs that are commands of their own. */
export function register(program: Command, ctx: CommandContext): void {
  examples(withCommon(program.command('dashboard')), ['router dashboard', 'router dashboard --json    # one snapshot, no TUI'])
    .description('one screen: daemon status, providers with circuit and cooldown state, combos, live throughput and errors')
    .option('--json', 'print one snapshot as JSON instead of the TUI')
    .addHelpText('after', '\nKeys: l logs, u usage, i inspect, r refresh, q quit (Esc returns to the dashboard).\nWithout a terminal it prints one plain snapshot.')
    .action(
      ctx.run(async (opts) => {
        const { dashboard } = await import('./live-commands.js');
        return dashboard(ctx, opts);
      }),
    );

  examples(withCommon(program.command('inspect')), ['router inspect', 'router inspect --json | jq .status    # a stream, no TUI'])
    .description('traffic inspector: live requests; select one to see its details (headers and bodies when recorded, secrets masked)')
    .option('--json', 'print each request as a JSON line instead of the TUI')
    .addHelpText('after', '\nKeys: ↑↓ select, Enter details, Tab request/response, f follow newest, Esc back, q quit.')
    .action(
      ctx.run(async (opts) => {
        const { inspect } = await import('./live-commands.js');
        return inspect(ctx, opts);
      }),
    );
}
