/**
 * Process entry of `router cluster migrate` (the CLI spawns `dist/daemon/cluster-migrate.js`: it never loads
 * daemon code itself). Arguments: `--from-home DIR [--json]`; the database URL comes in ROUTER_DATABASE_URL
 * and the cluster key in ROUTER_SECRET_KEY or ROUTER_SECRET_KEY_FILE, never on the command line (argv shows
 * in `ps`). Prints the report (JSON with --json) and exits 0, or prints one line to stderr and exits 1.
 */
import { resolve } from 'node:path';
import { maskUrlsIn } from '../shared/mask-url.js';
import { clusterMigrate, MigrateRefused, type ClusterMigrateReport } from './cluster/migrate.js';
import { resolveSecretKey, StartRefused } from './cluster/identity.js';
import { MigrationError } from './store/migrate.js';

function human(r: ClusterMigrateReport): string {
  const lines = [`copied into ${r.database} (schema version ${String(r.schemaVersion).padStart(4, '0')}):`];
  const width = Math.max(5, ...r.copied.map((t) => t.table.length), ...r.skipped.map((t) => t.table.length));
  for (const t of r.copied) {
    lines.push(`  ${t.table.padEnd(width)}  ${String(t.rows).padStart(7)} rows${t.droppedColumns ? `  (columns not copied: ${t.droppedColumns.join(', ')})` : ''}`);
  }
  const total = r.copied.reduce((n, t) => n + t.rows, 0);
  lines.push(`  ${'total'.padEnd(width)}  ${String(total).padStart(7)} rows in ${r.copied.length} tables`);
  if (r.skipped.length > 0) {
    lines.push('not copied (still kept on each node):');
    for (const t of r.skipped) lines.push(`  ${t.table.padEnd(width)}  ${String(t.rows).padStart(7)} rows  ${t.reason}`);
  }
  const f = r.fileContents;
  lines.push(`batch files: ${f.files} contents copied (${f.bytes} bytes)${f.missing.length ? `, ${f.missing.length} missing from the folder's files/: ${f.missing.slice(0, 5).join(', ')}` : ''}`);
  const s = r.secrets;
  lines.push(
    `secrets: ${s.kept + s.reencrypted} sealed with the cluster key (${r.key === 'given' ? 'the key given' : "the state folder's secret.key"}), ${s.needReentry} unreadable (their owners need new credentials)`,
  );
  if (r.key === 'state-folder') lines.push("start every node with this key: ROUTER_SECRET_KEY=$(xxd -p -c 64 <state folder>/secret.key)");
  return lines.join('\n');
}

async function main(): Promise<number> {
  const args = process.argv.slice(2);
  const at = args.indexOf('--from-home');
  const home = at >= 0 ? args[at + 1] : undefined;
  const url = process.env.ROUTER_DATABASE_URL;
  if (!home) throw new MigrateRefused('--from-home DIR is required (the single-machine state folder to copy)');
  if (!url) throw new MigrateRefused('--database-url URL is required (the empty PostgreSQL database of the cluster)');
  if (!/^postgres(ql)?:\/\//.test(url)) throw new MigrateRefused('the database URL must start with postgres:// or postgresql://');
  const report = await clusterMigrate({ home: resolve(home), databaseUrl: url, secretKey: resolveSecretKey(process.env) });
  process.stdout.write(`${args.includes('--json') ? JSON.stringify(report) : human(report)}\n`);
  return 0;
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    const known = err instanceof MigrateRefused || err instanceof StartRefused || err instanceof MigrationError;
    // Driver errors (connection refused, authentication) are safe to show once URLs are masked; nothing else is.
    const code = (err as { code?: unknown }).code;
    const message = known ? (err as Error).message : typeof code === 'string' ? `the database refused or could not be reached (${code}): ${(err as Error).message}` : 'migration failed (nothing was committed)';
    process.stderr.write(`${maskUrlsIn(message)}\n`);
    if (!known && process.env.ROUTER_DEBUG) process.stderr.write(`${(err as Error).stack ?? ''}\n`);
    process.exitCode = 1;
  },
);
