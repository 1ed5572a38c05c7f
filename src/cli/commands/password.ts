import type { Command } from 'commander';
import { CliError } from '../io.js';
import { askHidden, readStdin } from '../prompt.js';
import { examples, withCommon, type CommandContext } from '../common.js';

/** Reads the password: piped stdin as is, or a hidden prompt on a terminal. */
async function readPassword(): Promise<string> {
  return process.stdin.isTTY ? askHidden('New login password (input hidden): ') : readStdin();
}

export function register(program: Command, ctx: CommandContext): void {
  const password = program.command('password').description('the login password of the management API (POST /api/auth/login)');
  examples(withCommon(password.command('set')), ['router password set', 'printf %s "$PW" | router password set'])
    .description('set the login password (reads stdin when piped); ends existing login sessions')
    .action(
      ctx.run(async (opts) => {
        const pw = await readPassword();
        if (pw.length < 8) throw new CliError('the password must have at least 8 characters.');
        await ctx.client(opts).request('PUT', '/api/auth/password', { password: pw });
        ctx.io.out('password set; existing login sessions were ended');
        return 0;
      }),
    );
}
