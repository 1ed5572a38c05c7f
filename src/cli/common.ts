import type { Command } from 'commander';
import { DaemonClient } from './client.js';
import { readCliConfig } from './config.js';
import { CliError, type Io } from './io.js';
import { resolveTarget, type CommonOptions } from './target.js';

/** Adds the options every daemon-facing command accepts, so they can appear anywhere on the line. */
export function withCommon(cmd: Command): Command {
  return cmd
    .option('--home <dir>', 'state folder (default: $ROUTER_HOME or ~/.router)')
    .option('--host <host>', 'daemon address (default: $ROUTER_HOST or 127.0.0.1)')
    .option('--port <port>', 'daemon port (default: $ROUTER_PORT or 20128)')
    .option('--debug', 'show stack traces of errors');
}

/** Appends an "Examples:" block to a command's help. */
export function examples(cmd: Command, lines: string[]): Command {
  return cmd.addHelpText('after', ['', 'Examples:', ...lines.map((l) => `  ${l}`)].join('\n'));
}

export interface CommandContext {
  io: Io;
  /** Wraps an action: merges global options, maps errors to one line and an exit code. */
  run: (fn: (opts: any, ...args: any[]) => Promise<number>) => (...args: any[]) => Promise<void>;
  /** The typed daemon client for these options (target resolved from --home/--host/--port and config). */
  client: (opts: CommonOptions) => DaemonClient;
  /** Prints data: JSON with --json (or the `output: json` preference), else the human form. */
  emit: (opts: { json?: boolean }, data: unknown, human: () => string) => void;
  exitCode: number;
}

/** Builds the context commands register with. */
export function createContext(io: Io): CommandContext {
  const ctx: CommandContext = {
    io,
    exitCode: 0,
    client: (opts) => new DaemonClient(resolveTarget(opts), io.err),
    emit: (opts, data, human) => io.out(opts.json ? JSON.stringify(data) : human()),
    run: (fn) =>
      async function action(...args: any[]) {
        const cmd = args[args.length - 1] as Command;
        const opts = cmd.optsWithGlobals() as CommonOptions & { json?: boolean };
        const positional = args.slice(0, -2);
        try {
          if (opts.json === undefined && cmd.options.some((o) => o.long === '--json') && readCliConfig().output === 'json') opts.json = true;
          ctx.exitCode = await fn(opts, ...positional);
        } catch (err) {
          ctx.exitCode = reportError(err, io, Boolean(opts.debug || process.env.ROUTER_DEBUG));
        }
      },
  };
  return ctx;
}

function reportError(err: unknown, io: Io, debug: boolean): number {
  if (err instanceof CliError) {
    io.err(`router: ${err.message}`);
    if (err.detail) io.err(err.detail);
    if (debug && err.stack) io.err(err.stack);
    return err.exitCode;
  }
  io.err(`router: ${(err as Error).message ?? String(err)}`);
  if (debug && (err as Error).stack) io.err((err as Error).stack!);
  else io.err('(run again with --debug for the stack trace)');
  return 1;
}
