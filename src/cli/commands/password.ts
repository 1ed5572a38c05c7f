import { createInterface } from 'node:readline';
import type { Command } from 'commander';
import { DaemonClient } from '../client.js';
import { CliError } from '../io.js';
import { resolveTarget } from '../target.js';
import { withCommon, type CommandContext } from '../common.js';

/** Reads the password: piped stdin as is, or a hidden prompt on a terminal. */
async function readPassword(): Promise<string> {
  if (!process.stdin.isTTY) {
    let data = '';
    for await (const chunk of process.stdin) data += chunk;
    return data.replace(/\r?\n$/, '');
  }
  const rl = createInterface({ input: process.stdin, output: process.stdout, terminal: true });
  const write = (rl as unknown as { _writeToOutput: (s: string) => void })._writeToOutput;
  process.stdout.write('New dashboard password: ');
  (rl as unknown as { _writeToOutput: (s: string) => void })._writeToOutput = () => {};
  const answer = await new Promise<string>((resolve) => rl.question('', resolve));
  (rl as unknown as { _writeToOutput: (s: string) => void })._writeToOutput = write;
  rl.close();
  process.stdout.write('\n');
  return answer;
}

export function register(program: Command, ctx: CommandContext): void {
  const password = program.command('password').description('the dashboard login password');
  withCommon(password.command('set'))
    .description('set the dashboard password (reads stdin when piped); ends existing sessions')
    .addHelpText('after', '\nExamples:\n  router password set\n  printf %s "$PW" | router password set')
    .action(
      ctx.run(async (opts) => {
        const pw = await readPassword();
        if (pw.length < 8) throw new CliError('the password must have at least 8 characters.');
        await new DaemonClient(resolveTarget(opts), ctx.io.err).request('PUT', '/api/auth/password', { password: pw });
        ctx.io.out('password set; existing dashboard sessions were ended');
        return 0;
      }),
    );
}
