import type { Command } from 'commander';
import { CONFIG_KEYS, cliConfigDir, cliConfigFile, readCliConfig, resetCliConfigCache, type CliConfig } from '../config.js';
import { CliError } from '../io.js';
import { examples, type CommandContext } from '../common.js';

type Key = keyof CliConfig;

function checkKey(key: string): Key {
  if (!(key in CONFIG_KEYS)) throw new CliError(`unknown config key '${key}'; keys: ${Object.keys(CONFIG_KEYS).join(', ')}`, 2);
  return key as Key;
}

/** The conf store of the CLI config (loaded on use: conf and its validator cost start-up time). */
async function store() {
  const { default: Conf } = await import('conf');
  return new Conf<CliConfig>({
    cwd: cliConfigDir(),
    configName: 'cli',
    projectSuffix: '',
    schema: {
      home: { type: 'string', minLength: 1 },
      host: { type: 'string', minLength: 1 },
      port: { type: 'integer', minimum: 1, maximum: 65535 },
      output: { type: 'string', enum: ['table', 'json'] },
      color: { type: 'string', enum: ['auto', 'never'] },
    },
  });
}

function describeAll(config: CliConfig): string {
  const lines = [`# ${cliConfigFile()}`];
  for (const [key, spec] of Object.entries(CONFIG_KEYS)) {
    const v = config[key as Key];
    lines.push(`${key} = ${v === undefined ? '(unset)' : JSON.stringify(v)}`.padEnd(32) + `  # ${spec.describe}`);
  }
  return lines.join('\n');
}

export function register(program: Command, ctx: CommandContext): void {
  const { io } = ctx;
  const config = examples(program.command('config'), [
    'router config                     # show every preference and the file',
    'router config set port 20129      # commands talk to port 20129 unless told otherwise',
    'router config set output json     # data commands print JSON by default',
    'router config unset port',
  ])
    .description("the CLI's own preferences (default home, host, port, output); not the daemon's settings")
    .option('--json', 'print the preferences as JSON')
    .action(
      ctx.run(async (opts) => {
        const c = readCliConfig();
        io.out(opts.json ? JSON.stringify(c) : describeAll(c));
        return 0;
      }),
    );

  examples(config.command('get <key>'), ['router config get port'])
    .description('print one preference (empty when unset)')
    .action(
      ctx.run(async (_opts, key: string) => {
        const v = readCliConfig()[checkKey(key)];
        io.out(v === undefined ? '' : String(v));
        return 0;
      }),
    );

  examples(config.command('set <key> <value>'), ['router config set home ~/router-state', 'router config set output json'])
    .description('set one preference')
    .action(
      ctx.run(async (_opts, key: string, raw: string) => {
        const k = checkKey(key);
        const value = CONFIG_KEYS[k].parse(raw);
        (await store()).set(k, value as never);
        resetCliConfigCache();
        io.out(`${k} = ${JSON.stringify(value)}`);
        return 0;
      }),
    );

  examples(config.command('unset <key>'), ['router config unset output'])
    .description('remove one preference (its default applies again)')
    .action(
      ctx.run(async (_opts, key: string) => {
        const k = checkKey(key);
        (await store()).delete(k);
        resetCliConfigCache();
        io.out(`${k} unset`);
        return 0;
      }),
    );

  examples(config.command('path'), ['cat "$(router config path)"'])
    .description('print the path of the config file')
    .action(
      ctx.run(async () => {
        io.out(cliConfigFile());
        return 0;
      }),
    );
}
