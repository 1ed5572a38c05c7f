import type { Command } from 'commander';
import { query } from '../client.js';
import { CliError, table } from '../io.js';
import { costTotal, int, ms, parseSpan, stamp, tokens } from '../format.js';
import { examples, withCommon, type CommandContext } from '../common.js';
import type { BreakdownRow, Summary } from '../types.js';

const BY = ['provider', 'model', 'key', 'connection', 'endpoint', 'combo'] as const;

/** The time range of a period name (UTC calendar periods, or a span back from now). */
export function periodRange(period: string, now = Date.now()): { from?: number; to?: number } {
  if (period === 'all') return {};
  const d = new Date(now);
  if (period === 'today') return { from: Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate()) };
  if (period === 'month') return { from: Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1) };
  const span = parseSpan(period);
  if (span === undefined) throw new CliError(`--period expects today, month, all or a span like 1h, 24h, 7d, 30d; got '${period}'`, 2);
  return { from: now - span };
}

/** A breakdown row; grouped by key, the CLI adds the key's name (null for a deleted key or no key). */
export type UsageRow = BreakdownRow & { name?: string | null };

export interface UsageReport {
  summary: Summary;
  breakdown: { by: string; rows: UsageRow[] };
}

export function formatUsage(r: UsageReport): string {
  const s = r.summary;
  const head = [
    `usage ${stamp(s.from)} .. ${stamp(s.to)} UTC`,
    `requests ${int(s.requests)} (client requests ${int(s.traces)}, errors ${int(s.errors)}, streamed ${int(s.streamed)})`,
    `tokens   ${int(s.tokens.input)} in, ${int(s.tokens.output)} out (cache read ${int(s.tokens.cacheRead)}, reasoning ${int(s.tokens.reasoning)})${s.estimated ? `; ${int(s.estimated)} estimated` : ''}`,
    `cost     ${costTotal(s.costUsd, s.unpricedRequests)}   avg latency ${ms(s.avgLatencyMs)}`,
  ];
  if (r.breakdown.rows.length === 0) return [...head, '', 'no requests in this period'].join('\n');
  const rows = r.breakdown.rows.map((b) => [
    b.name ?? (b.key === null ? '-' : r.breakdown.by === 'key' ? `${b.key} (deleted)` : b.key),
    int(b.requests),
    int(b.errors),
    tokens(b.tokens.input),
    tokens(b.tokens.output),
    costTotal(b.costUsd, b.unpricedRequests),
    ms(b.avgLatencyMs),
  ]);
  const t = table([r.breakdown.by.toUpperCase(), 'REQUESTS', 'ERRORS', 'IN', 'OUT', 'COST', 'AVG LATENCY'], rows, [1, 2, 3, 4, 5, 6], { flex: [0] });
  return [...head, '', t].join('\n');
}

export function register(program: Command, ctx: CommandContext): void {
  examples(withCommon(program.command('usage')), [
    'router usage                       # the last 24 hours, by provider',
    'router usage --period 7d --by model',
    'router usage --from 2025-01-01 --to 2025-02-01 --json',
    'router usage --live                # live TUI: tokens, cost, requests with sparklines',
  ])
    .description('usage summary for a period: requests, tokens, cost, grouped by provider or model')
    .option('--period <period>', 'today, month, all, or a span back from now: 1h, 24h, 7d, 30d', '24h')
    .option('--from <time>', 'start (ISO 8601 date or date-time, or unix ms); overrides --period')
    .option('--to <time>', 'end (ISO 8601 or unix ms; default now)')
    .option('--by <group>', `group rows by ${BY.join(', ')}`, 'provider')
    .option('--live', 'a live view (TUI on a terminal; one line per interval otherwise)')
    .option('--interval <seconds>', 'with --live and no terminal: seconds between lines', '10')
    .option('--json', 'print {summary, breakdown: {by, rows}}')
    .action(
      ctx.run(async (opts) => {
        if (!(BY as readonly string[]).includes(opts.by)) throw new CliError(`--by expects one of ${BY.join(', ')}; got '${opts.by}'`, 2);
        if (opts.live) {
          if (!/^\d+$/.test(opts.interval) || Number(opts.interval) < 1) throw new CliError(`--interval expects whole seconds (1 or more), got '${opts.interval}'`, 2);
          const { usageLive } = await import('./live-commands.js');
          return usageLive(ctx, opts);
        }
        const range = opts.from || opts.to ? { from: opts.from, to: opts.to } : periodRange(opts.period);
        const q = query({ from: range.from, to: range.to });
        const c = ctx.client(opts);
        const [summary, breakdown] = await Promise.all([
          c.request<Summary>('GET', `/api/usage/summary${q}`),
          c.request<{ by: string; rows: BreakdownRow[] }>('GET', `/api/usage/breakdown${query({ by: opts.by, from: range.from, to: range.to })}`),
        ]);
        let rows: UsageRow[] = breakdown.rows;
        if (opts.by === 'key') {
          // Keys are known to people by name; the log holds ids.
          const { keys } = await c.call('GET /api/keys');
          const names = new Map(keys.map((k) => [k.id, k.name]));
          rows = rows.map((row) => ({ ...row, name: row.key === null ? null : (names.get(row.key) ?? null) }));
        }
        const report: UsageReport = { summary, breakdown: { by: breakdown.by, rows } };
        ctx.emit(opts, report, () => formatUsage(report));
        return 0;
      }),
    );
}
