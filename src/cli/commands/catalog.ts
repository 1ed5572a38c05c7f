import type { Command } from 'commander';
import { table } from '../io.js';
import { int } from '../format.js';
import { examples, withCommon, type CommandContext } from '../common.js';
import type { CatalogReply, CatalogUpdateResult as UpdateReply } from '../../shared/catalog.js';

/** A price per million tokens, or `-` when not published. */
const rate = (n: number | null | undefined) => (n === null || n === undefined ? '-' : `$${n}`);

export function formatCatalog(r: CatalogReply): string {
  if (r.models.length === 0) return `catalog ${r.version}: no model matches`;
  const rows = r.models.map((m) => [
    m.id,
    m.contextWindow === null ? '-' : int(m.contextWindow),
    m.maxOutputTokens === null ? '-' : int(m.maxOutputTokens),
    rate(m.prices?.input),
    rate(m.prices?.output),
    rate(m.prices?.cacheRead),
    rate(m.prices?.cacheWrite),
    [m.toolCall ? 'tools' : '', m.reasoning ? 'reasoning' : '', m.inputModalities.filter((x) => x !== 'text').join('+')].filter(Boolean).join(' '),
    m.source,
  ]);
  const head = `catalog ${r.version} (${r.source}); prices in USD per million tokens`;
  return `${head}\n${table(['MODEL', 'CONTEXT', 'MAX OUT', 'INPUT', 'OUTPUT', 'CACHE READ', 'CACHE WRITE', 'FEATURES', 'SOURCE'], rows, [1, 2, 3, 4, 5, 6])}`;
}

export function formatUpdate(r: UpdateReply): string {
  if (!r.updated) return `catalog not updated: ${r.reason}; keeping ${r.version} (${int(r.providers)} providers, ${int(r.models)} models)`;
  const same = r.version === r.previousVersion ? ' (same version as before)' : ` (was ${r.previousVersion})`;
  return `catalog updated to ${r.version}${same}: ${int(r.providers)} providers, ${int(r.models)} models`;
}

export function register(program: Command, ctx: CommandContext): void {
  const catalog = examples(withCommon(program.command('catalog')), [
    'router catalog                       # every model: context, max output, prices, features',
    'router catalog --provider anthropic',
    'router catalog --search sonnet --json',
    'router catalog update                # fetch a newer catalog (setting catalogUrl)',
  ])
    .description("the model catalog (models.dev data): context windows, max output, prices incl. cache read/write, tool calls, reasoning; your price overrides shown in place")
    .option('--provider <provider>', "only this provider's models")
    .option('--search <text>', 'only models whose id or name contains this text')
    .option('--json', 'print JSON ({version, source, models: [{id, provider, name, contextWindow, maxOutputTokens, inputModalities, outputModalities, toolCall, reasoning, prices, source}]})')
    .action(
      ctx.run(async (opts) => {
        const params = new URLSearchParams();
        if (opts.provider) params.set('provider', String(opts.provider));
        if (opts.search) params.set('search', String(opts.search));
        const qs = params.size ? `?${params}` : '';
        const r = await ctx.client(opts).request<CatalogReply>('GET', `/api/catalog/models${qs}`);
        ctx.emit(opts, r, () => formatCatalog(r));
        return 0;
      }),
    );

  examples(withCommon(catalog.command('update')), ['router catalog update', 'router settings set catalogUrl https://example.com/api.json && router catalog update'])
    .description('fetch the catalog from the setting catalogUrl (models.dev api.json by default); offline or on a bad reply it says so, keeps the current catalog and exits 1')
    .option('--json', 'print {updated, version, previousVersion, providers, models, reason?}')
    .action(
      ctx.run(async (opts) => {
        const r = await ctx.client(opts).request<UpdateReply>('POST', '/api/catalog/update', undefined, 60_000);
        ctx.emit(opts, r, () => formatUpdate(r));
        return r.updated ? 0 : 1;
      }),
    );
}
