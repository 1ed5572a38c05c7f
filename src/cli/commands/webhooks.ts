import type { Command } from 'commander';
import type { DaemonClient } from '../client.js';
import { CliError, table } from '../io.js';
import { stamp } from '../format.js';
import { examples, withCommon, type CommandContext } from '../common.js';
import type { WebhookView } from '../types.js';
import { EVENT_NAMES } from '../../shared/event-names.js';

const collect = (value: string, prev: string[] = []) => [...prev, value];

const KINDS = 'custom (default), slack, discord, telegram';
const EVENTS = `${EVENT_NAMES.join(', ')}, or * (all)`;

export function formatWebhooks(list: WebhookView[]): string {
  if (list.length === 0) return 'no webhooks; add one with `router webhooks add <url> --event request.failed`';
  const rows = list.map((w) => [
    w.id,
    w.kind,
    w.url,
    w.events.join(','),
    w.enabled ? 'on' : 'off',
    w.last_status === null ? '-' : String(w.last_status),
    String(w.failure_count),
    stamp(w.last_triggered_at),
  ]);
  return table(['ID', 'KIND', 'URL', 'EVENTS', 'ENABLED', 'LAST', 'FAILURES', 'LAST SENT (UTC)'], rows, [6], { flex: [2, 3] });
}

/** Finds a webhook by id, or by URL when only one webhook has it. */
async function findWebhook(c: DaemonClient, ref: string): Promise<WebhookView> {
  const { webhooks } = await c.request<{ webhooks: WebhookView[] }>('GET', '/api/webhooks');
  const found = webhooks.find((w) => w.id === ref) ?? (webhooks.filter((w) => w.url === ref).length === 1 ? webhooks.find((w) => w.url === ref) : undefined);
  if (!found) throw new CliError(`no such webhook '${ref}'; see \`router webhooks list\``);
  return found;
}

export function register(program: Command, ctx: CommandContext): void {
  const { io } = ctx;
  const webhooks = program.command('webhooks').description('signed HTTP notifications of router events (Slack, Discord, Telegram or your own URL)');

  examples(withCommon(webhooks.command('add <url>')), [
    'router webhooks add https://hooks.example.com/router --event request.failed --event provider.error',
    'router webhooks add https://hooks.slack.com/services/T/B/X --kind slack --event quota.exceeded',
    'router webhooks add -1001234567890 --kind telegram --event "*"   # url holds the chat id',
  ])
    .description('add a webhook; the signing secret is printed once')
    .option('--kind <kind>', KINDS)
    .option('--event <event>', `${EVENTS}; repeatable (default: *)`, collect)
    .option('--secret <secret>', 'signing secret (16..256 characters; default: generated)')
    .option('--description <text>', 'a note for yourself')
    .option('--disabled', 'add it switched off')
    .option('--json', 'print the created webhook as JSON (with its whole secret)')
    .action(
      ctx.run(async (opts, url: string) => {
        const body: Record<string, unknown> = { url };
        if (opts.kind) body.kind = opts.kind;
        if (opts.event) body.events = opts.event;
        if (opts.secret) body.secret = opts.secret;
        if (opts.description) body.description = opts.description;
        if (opts.disabled) body.enabled = false;
        const w = await ctx.client(opts).request<WebhookView>('POST', '/api/webhooks', body);
        ctx.emit(opts, w, () =>
          [`added webhook ${w.id} (${w.kind}) for ${w.events.join(', ')}`, '', `  signing secret: ${w.secret}`, '', 'Store the secret now: it is not shown again.'].join('\n'),
        );
        return 0;
      }),
    );

  examples(withCommon(webhooks.command('list')), ['router webhooks list', 'router webhooks list --json'])
    .description('list webhooks (secrets masked)')
    .option('--json', 'print JSON (an array of webhooks)')
    .action(
      ctx.run(async (opts) => {
        const { webhooks: list } = await ctx.client(opts).request<{ webhooks: WebhookView[] }>('GET', '/api/webhooks');
        ctx.emit(opts, list, () => formatWebhooks(list));
        return 0;
      }),
    );

  examples(withCommon(webhooks.command('test <webhook>')), ['router webhooks test 0b6c1f2e-...'])
    .description('send one test.ping to a webhook (no retries); exit 1 when it was not delivered')
    .option('--json', 'print {delivered, status, responseBody, error}')
    .action(
      ctx.run(async (opts, ref: string) => {
        const c = ctx.client(opts);
        const w = await findWebhook(c, ref);
        const r = await c.request<{ delivered: boolean; status: number; responseBody: string; error: string }>('POST', `/api/webhooks/${w.id}/test`, undefined, 60_000);
        ctx.emit(opts, r, () => (r.delivered ? `delivered to ${w.url} (HTTP ${r.status})` : `not delivered to ${w.url}: ${r.error || `HTTP ${r.status}`}`));
        return r.delivered ? 0 : 1;
      }),
    );

  examples(withCommon(webhooks.command('rm <webhook>')), ['router webhooks rm 0b6c1f2e-...'])
    .description('delete a webhook (by id, or by URL when it is unique)')
    .action(
      ctx.run(async (opts, ref: string) => {
        const c = ctx.client(opts);
        const w = await findWebhook(c, ref);
        await c.request('DELETE', `/api/webhooks/${w.id}`);
        io.out(`deleted webhook ${w.id}`);
        return 0;
      }),
    );
}
