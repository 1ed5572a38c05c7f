import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Command } from 'commander';
import { CliError } from '../io.js';
import { examples, type CommandContext } from '../common.js';

/** The daemon-side program that does the copy (the CLI never loads daemon code). */
const MIGRATE_ENTRY = fileURLToPath(new URL('../../daemon/cluster-migrate.js', import.meta.url));

export function register(program: Command, ctx: CommandContext): void {
  const cluster = program.command('cluster').description('cluster mode: several routers sharing PostgreSQL and Redis (docs/cluster.md)');
  examples(cluster.command('nodes'), ['router cluster nodes', 'router cluster nodes --json'])
    .description('the nodes of this cluster, their address, version, last heartbeat and health; the database and Redis health')
    .option('--json', 'print GET /api/cluster as JSON')
    .action(
      ctx.run(async (opts) => {
        const view = await ctx.client(opts).call('GET /api/cluster');
        ctx.emit(opts, view, () => {
          const db = view.database;
          const lines = [
            `mode: ${view.mode} (this node: ${view.nodeId})`,
            `database: ${db.kind}${db.url ? ` ${db.url}` : ''} ${db.healthy ? 'healthy' : 'UNHEALTHY'}${db.latencyMs !== null ? ` (${db.latencyMs} ms)` : ''}`,
            `redis: ${view.redis.configured ? `${view.redis.url ?? ''} ${view.redis.healthy ? 'healthy' : 'UNHEALTHY'}` : 'not configured'}`,
            ...(db.localModules?.length ? [`not shared yet (each node's own file): ${db.localModules.join(', ')}`] : []),
            '',
            ...view.nodes.map((n) => `${n.healthy ? 'healthy  ' : 'UNHEALTHY'}  ${n.nodeId}  ${n.url}  v${n.version}  last seen ${n.lastSeenAt}`),
          ];
          return lines.join('\n');
        });
        return 0;
      }),
    );
  examples(cluster.command('remove-node <id>'), ['router cluster remove-node gw-3'])
    .description('remove a node that is gone (listed unhealthy) from the cluster list; a live node is refused')
    .action(
      ctx.run(async (opts, id: string) => {
        await ctx.client(opts).call('DELETE /api/cluster/nodes/{id}', { params: { id } });
        ctx.io.out(`removed node ${id}`);
        return 0;
      }),
    );
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
