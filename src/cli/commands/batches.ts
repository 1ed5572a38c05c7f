import type { Command } from 'commander';
import { CliError, table } from '../io.js';
import { examples, withCommon, type CommandContext } from '../common.js';
import { BATCH_STATUSES } from '../../shared/records.js';
import type { BatchView } from '../types.js';

const STATUSES = BATCH_STATUSES.join(', ');

/** Unix seconds as `YYYY-MM-DD HH:MM:SS` (UTC), or `-`. */
function when(seconds: number | null): string {
  if (seconds === null) return '-';
  const iso = new Date(seconds * 1000).toISOString();
  return `${iso.slice(0, 10)} ${iso.slice(11, 19)}`;
}

function progress(b: BatchView): string {
  const c = b.request_counts;
  return `${c.completed + c.failed}/${c.total}`;
}

export function formatBatches(list: BatchView[]): string {
  if (list.length === 0) return 'no batches; clients create them with POST /v1/batches (docs/batch.md)';
  const rows = list.map((b) => [b.id, b.status, b.mode, b.endpoint, progress(b), String(b.request_counts.failed), when(b.created_at)]);
  return table(['ID', 'STATUS', 'MODE', 'ENDPOINT', 'DONE', 'FAILED', 'CREATED (UTC)'], rows, [4, 5], { flex: [3] });
}

export function formatBatch(b: BatchView): string {
  const c = b.request_counts;
  const lines = [
    `batch ${b.id}`,
    `  status:       ${b.status} (${b.mode})`,
    `  endpoint:     ${b.endpoint}`,
    `  requests:     ${c.total} total, ${c.completed} completed, ${c.failed} failed`,
    `  input file:   ${b.input_file_id}`,
    `  output file:  ${b.output_file_id ?? '-'}`,
    `  error file:   ${b.error_file_id ?? '-'}`,
    `  created:      ${when(b.created_at)} UTC`,
    `  expires:      ${when(b.expires_at)} UTC`,
  ];
  const ended = b.completed_at ?? b.cancelled_at ?? b.failed_at ?? b.expired_at;
  if (ended !== null) lines.push(`  ended:        ${when(ended)} UTC`);
  if (b.api_key_id) lines.push(`  API key:      ${b.api_key_id}`);
  if (b.metadata) lines.push(`  metadata:     ${JSON.stringify(b.metadata)}`);
  for (const e of b.errors?.data ?? []) lines.push(`  error:        ${e.code}: ${e.message}`);
  return lines.join('\n');
}

export function register(program: Command, ctx: CommandContext): void {
  const { io } = ctx;
  const batches = program.command('batches').description('batch jobs clients submitted with the Batch API (POST /v1/batches): list, show, cancel, delete');

  examples(withCommon(batches.command('list')), ['router batches list', 'router batches list --status in_progress,validating', 'router batches list --json'])
    .description('list batches, newest first')
    .option('--status <list>', `only these statuses, comma-separated (${STATUSES})`)
    .option('--limit <n>', 'at most this many (1..500, default 100)')
    .option('--json', 'print JSON (an array of batches)')
    .action(
      ctx.run(async (opts) => {
        const q = new URLSearchParams();
        if (opts.status) q.set('status', opts.status);
        if (opts.limit) q.set('limit', opts.limit);
        const path = `/api/batches${q.size ? `?${q}` : ''}`;
        const { batches: list } = await ctx.client(opts).request<{ batches: BatchView[] }>('GET', path);
        ctx.emit(opts, list, () => formatBatches(list));
        return 0;
      }),
    );

  examples(withCommon(batches.command('show <id>')), ['router batches show batch_6f1c...', 'router batches show batch_6f1c... --json'])
    .description('one batch: status, request counts, its files')
    .option('--json', 'print the batch object as JSON')
    .action(
      ctx.run(async (opts, id: string) => {
        const b = await ctx.client(opts).call('GET /api/batches/{id}', { params: { id } });
        ctx.emit(opts, b, () => formatBatch(b));
        return 0;
      }),
    );

  examples(withCommon(batches.command('cancel <id>')), ['router batches cancel batch_6f1c...'])
    .description('cancel a batch: requests in flight finish, the others are not sent')
    .option('--json', 'print the batch object as JSON')
    .action(
      ctx.run(async (opts, id: string) => {
        const b = await ctx.client(opts).call('POST /api/batches/{id}/cancel', { params: { id } });
        ctx.emit(opts, b, () => `batch ${b.id} is ${b.status}`);
        return 0;
      }),
    );

  examples(withCommon(batches.command('rm [id]')), ['router batches rm batch_6f1c...', 'router batches rm --completed'])
    .description('delete a finished batch and its output and error files; --completed deletes every finished batch')
    .option('--completed', 'delete every completed, failed, expired or cancelled batch')
    .action(
      ctx.run(async (opts, id: string | undefined) => {
        const c = ctx.client(opts);
        if (opts.completed) {
          if (id) throw new CliError('give a batch id or --completed, not both');
          const r = await c.call('DELETE /api/batches/completed');
          io.out(`deleted ${r.deleted} finished batch${r.deleted === 1 ? '' : 'es'}`);
          return 0;
        }
        if (!id) throw new CliError('give a batch id, or --completed for every finished batch; see `router batches list`');
        await c.call('DELETE /api/batches/{id}', { params: { id } });
        io.out(`deleted batch ${id}`);
        return 0;
      }),
    );
}
