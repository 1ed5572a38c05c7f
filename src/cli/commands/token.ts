import type { Command } from 'commander';
import { HEADER } from '../../shared/headers.js';
import { CliError } from '../io.js';
import { resolveTarget } from '../target.js';
import { examples, withCommon, type CommandContext } from '../common.js';

export function register(program: Command, ctx: CommandContext): void {
  examples(withCommon(program.command('token')), [
    'router token                 # where the token comes from; nothing secret',
    'curl -H "X-Router-CLI-Token: $(router token --reveal)" http://127.0.0.1:20128/api/settings',
  ])
    .description('the CLI token that authenticates this machine to the daemon (shown only with --reveal)')
    .option('--reveal', 'print the token itself, alone on one line (for scripts on this machine)')
    .option('--json', 'print {header, saltFile, available} (and token with --reveal)')
    .action(
      ctx.run(async (opts) => {
        const target = resolveTarget(opts);
        const token = target.cliToken;
        if (opts.reveal) {
          if (!token) throw new CliError(`no CLI token yet: ${target.paths.cliSalt} is created when the daemon first starts; try \`router start\``);
          if (opts.json) ctx.io.out(JSON.stringify({ header: HEADER.cliToken, saltFile: target.paths.cliSalt, available: true, token }));
          else ctx.io.out(token);
          return 0;
        }
        const info = { header: HEADER.cliToken, saltFile: target.paths.cliSalt, available: Boolean(token) };
        ctx.emit(opts, info, () =>
          token
            ? [
                `The CLI token is derived from ${info.saltFile} (mode 0600) and this machine's identity.`,
                `The daemon accepts it in the ${HEADER.cliToken} header from loopback callers only.`,
                'It is not shown; `router token --reveal` prints it.',
              ].join('\n')
            : `no CLI token yet: ${info.saltFile} is created when the daemon first starts; try \`router start\``,
        );
        return token ? 0 : 1;
      }),
    );
}
