import type { Command } from 'commander';
import { DaemonClient } from '../client.js';
import { CliError } from '../io.js';
import { resolveTarget } from '../target.js';
import { examples, withCommon, type CommandContext } from '../common.js';

/** Parses a value given on the command line: JSON when it is JSON (true, 42, ["a"]), else a string. */
function parseValue(raw: string): unknown {
  try {
    return JSON.parse(raw);
  } catch {
    return raw;
  }
}

export function register(program: Command, ctx: CommandContext): void {
  const { io } = ctx;
  const settings = program.command('settings').description('read and change daemon settings');
  examples(withCommon(settings.command('get [key]')), ['router settings get', 'router settings get requireLogin', 'router settings get --json'])
    .description('print all settings, or one')
    .option('--json', 'print JSON')
    .action(
      ctx.run(async (opts, key?: string) => {
        const all = await new DaemonClient(resolveTarget(opts), io.err).request<Record<string, unknown>>('GET', '/api/settings');
        if (key !== undefined && !(key in all)) throw new CliError(`unknown setting '${key}'`);
        const value = key === undefined ? all : all[key];
        if (opts.json || key !== undefined) io.out(JSON.stringify(value));
        else for (const [k, v] of Object.entries(all)) io.out(`${k} = ${JSON.stringify(v)}`);
        return 0;
      }),
    );
  withCommon(settings.command('set <key> <value>'))
    .description('change one setting')
    .addHelpText('after', '\nExamples:\n  router settings set requireLogin false\n  router settings set allowedOrigins \'["http://localhost:5173"]\'')
    .action(
      ctx.run(async (opts, key: string, value: string) => {
        const next = await new DaemonClient(resolveTarget(opts), io.err).request<Record<string, unknown>>('PATCH', '/api/settings', {
          [key]: parseValue(value),
        });
        io.out(`${key} = ${JSON.stringify(next[key])}`);
        return 0;
      }),
    );
}
