import type { Command } from 'commander';
import type { OAuthConnectionView } from '../../shared/oauth.js';
import type { AccountLimitWindow, AccountView } from '../../shared/records.js';
import { examples, withCommon, type CommandContext } from '../common.js';
import { stamp } from '../format.js';
import { table } from '../io.js';

/** A count as people read it: 1234 -> 1.2k, 2400000 -> 2.4M. */
function short(n: number): string {
  if (n >= 1e6) return `${(n / 1e6).toFixed(n >= 1e7 ? 0 : 1)}M`;
  if (n >= 1e3) return `${(n / 1e3).toFixed(n >= 1e4 ? 0 : 1)}k`;
  return String(n);
}

/** One window: `requests 12/60`, `tokens 8.0k/40k`, `codex-primary 35% used`. */
function windowText(w: AccountLimitWindow): string {
  if (w.remaining !== null) return `${w.name} ${short(w.remaining)}${w.limit === null ? '' : `/${short(w.limit)}`}`;
  if (w.used !== null) return `${w.name} ${Math.round(w.used * 100)}% used`;
  return w.name;
}

function seconds(s: number): string {
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m${s % 60 ? ` ${s % 60}s` : ''}`;
  return `${Math.floor(s / 3600)}h ${Math.floor((s % 3600) / 60)}m`;
}

function status(a: AccountView): string {
  if (!a.isActive) return 'inactive';
  if (a.coolingUntil) {
    const left = Math.max(1, Math.ceil((Date.parse(a.coolingUntil) - Date.now()) / 1000));
    return `cooling ${seconds(left)}`;
  }
  return a.cooldowns.length ? `cooling (${a.cooldowns.length} model${a.cooldowns.length > 1 ? 's' : ''})` : 'active';
}

export function register(program: Command, ctx: CommandContext): void {
  examples(withCommon(program.command('accounts')), ['router accounts', 'router accounts --json'])
    .description(
      "every account (connection) by provider: status and cooldowns, the quota left as the provider's rate-limit headers last reported it (HEADROOM: share left of the tightest window; the headroom account strategy prefers the most), OAuth token expiry and last refresh",
    )
    .option('--json', 'print JSON')
    .action(
      ctx.run(async (opts: { json?: boolean }) => {
        const client = ctx.client(opts as never);
        const [{ accounts, accountStrategy }, { connections }] = await Promise.all([
          client.call('GET /api/accounts'),
          client.request<{ connections: OAuthConnectionView[] }>('GET', '/api/providers'),
        ]);
        const byId = new Map(connections.map((c) => [c.id, c]));
        const list = [...accounts].sort((a, b) => a.provider.localeCompare(b.provider) || a.priority - b.priority);
        const rows = list.map((a) => ({
          ...a,
          expiresAt: byId.get(a.id)?.expiresAt ?? null,
          lastRefreshedAt: (byId.get(a.id)?.providerSpecificData?.lastRefreshedAt as string | undefined) ?? null,
        }));
        ctx.emit(opts, { accountStrategy, accounts: rows }, () =>
          rows.length === 0
            ? 'no accounts; `router providers add <provider>` or `router login <provider>` adds one'
            : `${table(
                ['PROVIDER', 'NAME', 'KIND', 'STATUS', 'QUOTA LEFT', 'HEADROOM', 'RESETS', 'EXPIRES', 'LAST REFRESH'],
                rows.map((a) => {
                  const resets = a.windows.map((w) => w.resetSeconds).filter((s): s is number => s !== null && s > 0);
                  return [
                    a.provider,
                    a.name,
                    a.authKind,
                    status(a),
                    a.windows.length ? a.windows.map(windowText).join(', ') : '-',
                    a.headroom === null ? '-' : `${Math.round(a.headroom * 100)}%`,
                    resets.length ? seconds(Math.min(...resets)) : '-',
                    a.expiresAt ? stamp(a.expiresAt) : '-',
                    a.lastRefreshedAt ? stamp(a.lastRefreshedAt) : '-',
                  ];
                }),
                [],
                { flex: [1, 4] },
              )}\naccount strategy: ${accountStrategy}`,
        );
        return 0;
      }),
    );
}
