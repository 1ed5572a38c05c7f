import type { Command } from 'commander';
import { query } from '../client.js';
import { CliError, table } from '../io.js';
import { clock, ms, parseSpan, stamp, tokens, cost } from '../format.js';
import { examples, withCommon, type CommandContext } from '../common.js';
import type { LogEntry, RequestEntry } from '../types.js';

/** The filters `router logs` and the live views apply; status accepts 429, 4xx, error, success. */
export interface RequestFilter {
  provider?: string;
  model?: string;
  status?: string;
  key?: string;
}

const STATUS_RE = /^([1-5]\d\d|[1-5]xx|error|success)$/i;

export function checkStatusFilter(status: string | undefined): void {
  if (status !== undefined && !STATUS_RE.test(status)) {
    throw new CliError(`--status expects an HTTP status (429), a class (2xx, 4xx, 5xx), error or success; got '${status}'`, 2);
  }
}

/** The same matching the daemon's /api/logs does, for entries arriving over the live channel. */
export function matchesFilter(e: RequestEntry, f: RequestFilter): boolean {
  if (f.provider && e.provider !== f.provider) return false;
  if (f.key && e.apiKeyId !== f.key) return false;
  if (f.model && e.model !== f.model && `${e.provider}/${e.model}` !== f.model && e.requestedModel !== f.model) return false;
  if (f.status) {
    const s = f.status.toLowerCase();
    if (s === 'error' && e.status < 400) return false;
    if (s === 'success' && e.status >= 400) return false;
    if (/^[1-5]xx$/.test(s) && Math.floor(e.status / 100) !== Number(s[0])) return false;
    if (/^\d{3}$/.test(s) && e.status !== Number(s)) return false;
  }
  return true;
}

/** What the client asked for, when it differs from the provider/model that served it (combos, aliases). */
function asked(e: RequestEntry): string {
  const served = `${e.provider}/${e.model}`;
  return e.requestedModel && e.requestedModel !== served ? e.requestedModel : '';
}

/** One request as a single line (`router logs -f` without a terminal). */
export function formatLogLine(e: RequestEntry): string {
  const via = asked(e);
  const error = e.error ? `  ${e.error}` : '';
  return `${clock(e.timestamp)}  ${e.status}  ${e.provider}/${e.model}${via ? ` (${via})` : ''}  ${tokens(e.tokensIn)} -> ${tokens(e.tokensOut)} tok  ${cost(e.costUsd)}  ${ms(e.latencyMs)}${error}`;
}

/** The request log as a table, oldest first like a tail. */
export function formatLogs(entries: LogEntry[]): string {
  if (entries.length === 0) return 'no requests logged (yet)';
  const rows = [...entries].reverse().map((e) => [
    stamp(e.timestamp),
    String(e.status),
    `${e.provider}/${e.model}`,
    asked(e) || '-',
    tokens(e.tokensIn),
    tokens(e.tokensOut),
    cost(e.costUsd),
    ms(e.latencyMs),
    e.error ?? '',
  ]);
  return table(['TIME (UTC)', 'STATUS', 'MODEL', 'REQUESTED', 'IN', 'OUT', 'COST', 'LATENCY', 'ERROR'], rows, [4, 5, 6, 7], { flex: [2, 3, 8] });
}

export function register(program: Command, ctx: CommandContext): void {
  examples(withCommon(program.command('logs')), [
    'router logs                         # the last 50 requests',
    'router logs -n 200 --status error --since 1h',
    'router logs --provider openai --json',
    'router logs -f                      # follow: a live TUI on a terminal, lines otherwise',
    'router logs -f --status 5xx | grep anthropic',
  ])
    .description('recent proxied requests (newest last); -f follows new ones as they happen')
    .option('-n, --limit <n>', 'how many recent requests (1..500)', '50')
    .option('--provider <provider>', 'only this provider')
    .option('--model <model>', 'only this model (upstream id, <provider>/<model> or the requested name)')
    .option('--status <status>', 'only this status: 429, a class (2xx, 4xx, 5xx), error or success')
    .option('--key <key>', 'only requests made with this API key (id or name)')
    .option('--since <span>', 'only requests in the last span (15m, 1h, 7d)')
    .option('-f, --follow', 'keep printing new requests as they are recorded')
    .option('--json', 'print JSON (an array, newest first; with -f one JSON object per line)')
    .action(
      ctx.run(async (opts) => {
        const limit = Number(opts.limit);
        if (!Number.isInteger(limit) || limit < 1 || limit > 500) throw new CliError(`--limit expects 1..500, got '${opts.limit}'`, 2);
        checkStatusFilter(opts.status);
        const since = opts.since === undefined ? undefined : parseSpan(opts.since);
        if (opts.since !== undefined && since === undefined) throw new CliError(`--since expects a span like 15m, 1h, 7d; got '${opts.since}'`, 2);
        const q = query({
          limit,
          provider: opts.provider,
          model: opts.model,
          status: opts.status,
          key: opts.key,
          from: since === undefined ? undefined : Date.now() - since,
        });
        if (opts.follow) {
          const { followLogs } = await import('./live-commands.js');
          return followLogs(ctx, opts, q);
        }
        const { logs } = await ctx.client(opts).request<{ logs: LogEntry[] }>('GET', `/api/logs${q}`);
        ctx.emit(opts, logs, () => formatLogs(logs));
        return 0;
      }),
    );
}
