import type { Command } from 'commander';
import type { SyncAction, SyncReply, SyncReport } from '../../shared/sync.js';
import { table } from '../io.js';
import { examples, withCommon, type CommandContext } from '../common.js';

/** A sync report as a table: one row per record that changed, was kept, or was skipped. */
export function formatReport(action: SyncAction, report: SyncReport): string {
  const where = action === 'push' ? 'on the remote' : 'here';
  if (report.changes.length === 0) return `nothing to change ${where} (${report.unchanged} records already equal)`;
  const rows = report.changes.map((c) => [c.kind, c.name, c.result, c.reason ?? '']);
  return [`${action} done; changes ${where}:`, table(['KIND', 'NAME', 'RESULT', 'NOTE'], rows, [], { flex: [1, 3] }), `${report.unchanged} records already equal`].join('\n');
}

function formatStatus(r: SyncReply): string {
  const counts = Object.entries(r.remote?.counts ?? {}).map(([k, v]) => `${v} ${k}`).join(', ');
  return [
    `remote snapshot: ${r.remote?.exportedAt ?? '-'} (${counts || 'empty'})`,
    `last sync here:  ${r.lastSync ? `${r.lastSync.action} at ${r.lastSync.at}` : 'never (since the daemon started)'}`,
  ].join('\n');
}

export function register(program: Command, ctx: CommandContext): void {
  const sync = program
    .command('sync')
    .description('sync configuration with another router or your own HTTPS endpoint (settings cloudSync: url, secret, enabled)');
  const actions: Array<[SyncAction, string, string[]]> = [
    ['push', 'send this configuration to the remote, which merges it (last change wins, nothing deleted)', ['router sync push']],
    ['pull', "fetch the remote's configuration and merge it here; credentials and security changes only with the cloudSync opt-ins (docs/security.md)", ['router sync pull', 'router sync pull --json']],
    ['status', "the remote's snapshot time and counts, and this router's last sync", ['router sync status']],
  ];
  for (const [action, description, lines] of actions) {
    examples(withCommon(sync.command(action)), lines)
      .description(description)
      .option('--json', 'print the reply as JSON')
      .action(
        ctx.run(async (opts) => {
          const r = await ctx.client(opts).request<SyncReply>('POST', '/api/sync/cloud', { action }, 120_000);
          ctx.emit(opts, r, () => (r.report ? formatReport(action, r.report) : formatStatus(r)));
          return 0;
        }),
      );
  }
}
