import type { Command } from 'commander';
import { table } from '../io.js';
import { int } from '../format.js';
import { examples, withCommon, type CommandContext } from '../common.js';
import type { ComboRecord, PublicConnection } from '../types.js';

/** One model of the catalog as `router models` lists it. */
export interface ModelRow {
  id: string;
  provider: string;
  contextLength: number | null;
  /** `static` (shipped list), `synced` (fetched upstream) or `combo`. */
  source: string;
}

interface ProviderModels {
  provider: string;
  source: 'synced' | 'static';
  models: Array<{ id: string; contextLength?: number }>;
}

export function formatModels(rows: ModelRow[]): string {
  if (rows.length === 0) return 'no models match; add a connection with `router providers add <provider>` or a combo with `router combos add`';
  return table(
    ['MODEL', 'PROVIDER', 'CONTEXT', 'SOURCE'],
    rows.map((r) => [r.id, r.provider, r.contextLength === null ? '-' : int(r.contextLength), r.source]),
    [2],
  );
}

/**
 * The model catalog of the configured providers plus the combos. The daemon has no management route for
 * the whole catalog (`/v1/models` is a client route), so this reads the models of each connected
 * provider through its first active connection; no-auth local providers without a connection are absent.
 */
export async function loadModels(ctx: CommandContext, opts: object): Promise<ModelRow[]> {
  const c = ctx.client(opts);
  const [{ connections }, { combos }] = await Promise.all([
    c.request<{ connections: PublicConnection[] }>('GET', '/api/providers'),
    c.request<{ combos: ComboRecord[] }>('GET', '/api/combos'),
  ]);
  const firstByProvider = new Map<string, PublicConnection>();
  for (const conn of connections) if (conn.isActive && !firstByProvider.has(conn.provider)) firstByProvider.set(conn.provider, conn);
  const lists = await Promise.all(
    [...firstByProvider.values()].map((conn) => c.request<ProviderModels>('GET', `/api/providers/${encodeURIComponent(conn.id)}/models`)),
  );
  const rows: ModelRow[] = combos.map((k) => ({ id: k.name, provider: 'combo', contextLength: null, source: 'combo' }));
  for (const list of lists) {
    for (const m of list.models) rows.push({ id: `${list.provider}/${m.id}`, provider: list.provider, contextLength: m.contextLength ?? null, source: list.source });
  }
  return rows;
}

export function register(program: Command, ctx: CommandContext): void {
  examples(withCommon(program.command('models')), ['router models', 'router models --provider openai', 'router models --search sonnet --json'])
    .description('list the model catalog: models of connected providers, and combos')
    .option('--provider <provider>', "only this provider's models ('combo' for combos)")
    .option('--search <text>', 'only models whose id contains this text (case-insensitive)')
    .option('--json', 'print JSON (an array of {id, provider, contextLength, source})')
    .action(
      ctx.run(async (opts) => {
        let rows = await loadModels(ctx, opts);
        if (opts.provider) rows = rows.filter((r) => r.provider === opts.provider);
        if (opts.search) rows = rows.filter((r) => r.id.toLowerCase().includes(String(opts.search).toLowerCase()));
        ctx.emit(opts, rows, () => formatModels(rows));
        return 0;
      }),
    );
}
