import { Command, CommanderError } from 'commander';
import { VERSION } from '../shared/version.js';
import { createContext, withCommon, type CommandContext } from './common.js';
import { processIo, type Io } from './io.js';

type Register = (program: Command, ctx: CommandContext) => void;

/**
 * Command groups in help order, each loaded on demand: a run of `router status` imports the status
 * module only, so the CLI's start-up cost does not grow with the number of commands.
 */
const GROUPS: Array<[string, () => Promise<{ register: Register }>]> = [
  ['setup', () => import('./commands/setup.js')],
  ['doctor', () => import('./commands/doctor.js')],
  ['start', () => import('./commands/start.js')],
  ['stop', () => import('./commands/stop.js')],
  ['restart', () => import('./commands/restart.js')],
  ['status', () => import('./commands/status.js')],
  ['dashboard inspect', () => import('./commands/tui.js')],
  ['keys', () => import('./commands/keys.js')],
  ['providers', () => import('./commands/providers.js')],
  ['combos', () => import('./commands/combos.js')],
  ['models', () => import('./commands/models.js')],
  ['catalog', () => import('./commands/catalog.js')],
  ['pricing', () => import('./commands/pricing.js')],
  ['settings', () => import('./commands/settings.js')],
  ['usage', () => import('./commands/usage.js')],
  ['logs', () => import('./commands/logs.js')],
  ['webhooks', () => import('./commands/webhooks.js')],
  ['batches', () => import('./commands/batches.js')],
  ['memory', () => import('./commands/memory.js')],
  ['import', () => import('./commands/import.js')],
  ['login', () => import('./commands/login.js')],
  ['accounts', () => import('./commands/accounts.js')],
  ['backup', () => import('./commands/backup.js')],
  ['sync', () => import('./commands/sync.js')],
  ['password', () => import('./commands/password.js')],
  ['token', () => import('./commands/token.js')],
  ['mcp', () => import('./commands/mcp.js')],
  ['evals', () => import('./commands/evals.js')],
  ['config-tool', () => import('./commands/config-tool.js')],
  ['config', () => import('./commands/config.js')],
  ['cluster', () => import('./commands/cluster.js')],
  ['completion __complete', () => import('./commands/completion.js')],
];

/** Options of the program that take a value: their value is not the command name. */
const VALUE_OPTIONS = new Set(['--home', '--host', '--port']);

/** The command named on the line (the first word that is neither an option nor an option's value). */
export function commandName(argv: readonly string[]): string | undefined {
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (VALUE_OPTIONS.has(a)) i++;
    else if (!a.startsWith('-')) return a;
  }
  return undefined;
}

/**
 * Builds the `router` program. Exit codes: 0 ok, 1 error, 2 usage. With `only`, just that command's group
 * is registered (when it names one); otherwise every group, for help, suggestions and completion.
 */
export async function buildProgram(io: Io = processIo, only?: string | null) {
  const ctx = createContext(io);
  const program = new Command('router')
    .description('router: a local-first model-routing proxy for OpenAI, Anthropic and Gemini clients')
    .version(VERSION, '-v, --version')
    .addHelpText(
      'after',
      [
        '',
        'Examples:',
        '  router setup                 # first run: every coding agent on this machine through router',
        '  router start && router status',
        '  router providers add openai --api-key-stdin < ~/.openai-key',
        '  router logs -f --status error',
        '  router dashboard',
        '',
        'Every daemon command accepts --home, --host and --port anywhere on the line; exit codes: 0 ok, 1 error, 2 usage.',
      ].join('\n'),
    )
    .configureOutput({ writeOut: io.out, writeErr: io.err })
    .exitOverride();
  // Declared on the program too, so they are accepted before the command name as well as after it
  // (`router --home H status`); commands read them through optsWithGlobals().
  withCommon(program);
  // null: no command at all (`router --version`); undefined or an unknown name: every group.
  const chosen = only === null ? [] : GROUPS.filter(([names]) => only !== undefined && names.split(' ').includes(only));
  for (const [, load] of chosen.length || only === null ? chosen : GROUPS) (await load()).register(program, ctx);
  return { program, ctx };
}

/**
 * The command a line names, as deep as its words go (`keys add --nme x` -> `keys add`): the one whose
 * usage line a usage error prints.
 */
export function commandOf(program: Command, argv: readonly string[]): Command {
  let cmd = program;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (VALUE_OPTIONS.has(a)) i++;
    else if (!a.startsWith('-')) {
      const sub = cmd.commands.find((c) => c.name() === a || c.aliases().includes(a));
      if (!sub) break;
      cmd = sub;
    }
  }
  return cmd;
}

/** `router keys add [options]`, the one-line usage of a command (the whole help is one `--help` away). */
export function usageLine(cmd: Command): string {
  const names: string[] = [];
  for (let c: Command | null = cmd; c; c = c.parent) names.unshift(c.name());
  const path = names.join(' ');
  return `Usage: ${path} ${cmd.usage()}\nRun \`${path} --help\` for options and examples.`;
}

/** Runs the CLI with argv and returns the exit code. */
export async function runCli(argv: string[], io: Io = processIo): Promise<number> {
  const name = commandName(argv);
  const versionOnly = name === undefined && argv.some((a) => a === '-v' || a === '--version');
  const { program, ctx } = await buildProgram(io, versionOnly ? null : name);
  try {
    await program.parseAsync(argv, { from: 'user' });
  } catch (err) {
    if (err instanceof CommanderError) {
      if (err.code === 'commander.helpDisplayed' || err.code === 'commander.version' || err.exitCode === 0) return 0;
      // commander printed the error (with "Did you mean ...?" for a typo); add the short usage, not the full help.
      if (err.code !== 'commander.help') io.err(usageLine(commandOf(program, argv)));
      return 2;
    }
    throw err;
  }
  return ctx.exitCode;
}
