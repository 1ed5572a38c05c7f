import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Command } from 'commander';
import { CliError } from '../io.js';
import { examples, type CommandContext } from '../common.js';

/** The daemon-side program that does the copy (the CLI never loads daemon code). */
const MIGRATE_ENTRY = fileURLToPath(new URL('../../daemon/cluster-migrate.js', import.meta.url));

export function register(program: Command, ctx: CommandContext): void {
  const cluster = program.command('cluster').description('cluster mode: several routers sharing PostgreSQL and Redis (docs/cluster.md)');
  examples(cluster.command('migrate'), [
    'router cluster migrate --from-home ~/.router --database-url postgres://router:secret@db:5432/router',
    'ROUTER_SECRET_KEY=... router cluster migrate --from-home ~/.router --database-url "$ROUTER_DATABASE_URL" --json',
  ])
    .description("copy a single machine's state folder into the empty PostgreSQL database of a new cluster (secrets re-sealed with the cluster key)")
    .requiredOption('--from-home <dir>', 'the state folder of the single-machine router (stop it first)')
    .option('--database-url <url>', 'the empty PostgreSQL database (default: $ROUTER_DATABASE_URL)')
    .option('--secret-key-file <file>', "the cluster's sealing key (default: $ROUTER_SECRET_KEY, else the folder's secret.key)")
    .option('--json', 'print the report as JSON')
    .action(
      ctx.run(async (opts: { fromHome: string; databaseUrl?: string; secretKeyFile?: string; json?: boolean }) => {
        const url = opts.databaseUrl ?? process.env.ROUTER_DATABASE_URL;
        if (!url) throw new CliError('give --database-url (or set ROUTER_DATABASE_URL): the empty PostgreSQL database of the cluster', 2);
        const { execa } = await import('execa');
        // The URL and the key travel in the environment: argv shows in `ps`.
        const env: Record<string, string> = { ROUTER_DATABASE_URL: url };
        if (opts.secretKeyFile !== undefined) env.ROUTER_SECRET_KEY_FILE = resolve(opts.secretKeyFile);
        const r = await execa(process.execPath, [MIGRATE_ENTRY, '--from-home', resolve(opts.fromHome), ...(opts.json ? ['--json'] : [])], {
          env,
          reject: false,
          stdin: 'ignore',
        });
        if (r.exitCode !== 0) throw new CliError(String(r.stderr).trim() || `cluster migrate failed (exit ${r.exitCode})`);
        ctx.io.out(String(r.stdout));
        return 0;
      }),
    );
}
