import type { Command } from 'commander';
import { table } from '../io.js';
import { int } from '../format.js';
import { examples, withCommon, type CommandContext } from '../common.js';

/** One model of the catalog as `router models` lists it. */
export interface ModelRow {
  id: string;
  provider: string;
  contextLength: number | null;
  /** `static` (shipped list), `synced` (fetched upstream) or `combo`. */
  source: string;
}

export function formatModels(rows: ModelRow[]): string {
  if (rows.length === 0) return 'no models match; add a connection with `router providers add <provider>` or a combo with `router combos add`';
  return table(
    ['MODEL', 'PROVIDER', 'CONTEXT', 'SOURCE'],
    rows.map((r) => [r.id, r.provider, r.contextLength === null ? '-' : int(r.contextLength), r.source]),
    [2],
  );
}

/** The model catalog as clients see it (combos, no-auth local providers, connected providers). */
export async function loadModels(ctx: CommandContext, opts: object): Promise<ModelRow[]> {
  const { models } = await ctx.client(opts).request<{ models: ModelRow[] }>('GET', '/api/models');
  return models;
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
