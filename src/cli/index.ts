import { Command, CommanderError } from 'commander';
import { VERSION } from '../shared/version.js';
import { createContext, withCommon } from './common.js';
import { processIo, type Io } from './io.js';
import { register as combos } from './commands/combos.js';
import { register as keys } from './commands/keys.js';
import { register as password } from './commands/password.js';
import { register as restart } from './commands/restart.js';
import { register as settings } from './commands/settings.js';
import { register as start } from './commands/start.js';
import { register as status } from './commands/status.js';
import { register as stop } from './commands/stop.js';

/** Builds the `router` program. Exit codes: 0 ok, 1 error, 2 usage. */
export function buildProgram(io: Io = processIo) {
  const ctx = createContext(io);
  const program = new Command('router')
    .description('router: a local-first model-routing proxy for OpenAI, Anthropic and Gemini clients')
    .version(VERSION, '-v, --version')
    .showHelpAfterError()
    .configureOutput({ writeOut: io.out, writeErr: io.err })
    .exitOverride();
  // Declared on the program too, so they are accepted before the command name as well as after it
  // (`router --home H status`); commands read them through optsWithGlobals().
  withCommon(program);
  for (const reg of [start, stop, restart, status, keys, combos, password, settings]) reg(program, ctx);
  return { program, ctx };
}

/** Runs the CLI with argv and returns the exit code. */
export async function runCli(argv: string[], io: Io = processIo): Promise<number> {
  const { program, ctx } = buildProgram(io);
  try {
    await program.parseAsync(argv, { from: 'user' });
  } catch (err) {
    if (err instanceof CommanderError) {
      if (err.code === 'commander.helpDisplayed' || err.code === 'commander.version' || err.exitCode === 0) return 0;
      return 2;
    }
    throw err;
  }
  return ctx.exitCode;
}
