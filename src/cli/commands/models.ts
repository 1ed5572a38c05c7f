import type { Command } from 'commander';
import { commandHints } from '../client.js';
import { table } from '../io.js';
import { cost, int, ms } from '../format.js';
import { examples, withCommon, type CommandContext } from '../common.js';

/** One model of the catalog as `GET /api/models` lists it. */
export interface ModelRow {
  id: string;
  provider: string;
  contextLength: number | null;
  /** `static` (shipped list), `synced` (fetched upstream), `local` (listed by the running local server) or `combo`. */
  source: string;
  available?: boolean;
  /** combo, connected, local, no connection, unreachable. */
  availability?: string;
}

export function formatModels(rows: ModelRow[], all = false): string {
  if (rows.length === 0) {
    return 'no usable models: add a connection with `router providers add <provider>` or a combo with `router combos add`; `router models --all` lists the whole catalog';
  }
  const head = ['MODEL', 'PROVIDER', 'CONTEXT', 'SOURCE'];
  const cells = (r: ModelRow) => [r.id, r.provider, r.contextLength === null ? '-' : int(r.contextLength), r.source];
  if (!all) return table(head, rows.map(cells), [2], { flex: [0] });
  return table([...head, 'AVAILABLE'], rows.map((r) => [...cells(r), r.available === false ? `no (${r.availability})` : `yes (${r.availability})`]), [2], { flex: [0, 4] });
}

/** The model catalog: what works now (combos, connected providers, reachable local servers), or everything. */
export async function loadModels(ctx: CommandContext, opts: object, all = false): Promise<ModelRow[]> {
  const { models } = await ctx.client(opts).request<{ models: ModelRow[] }>('GET', `/api/models${all ? '?all=true' : ''}`);
  return models;
}

/** The reply of `POST /api/models/test`. */
interface ModelTest {
  ok: boolean;
  model: string;
  served?: { model: string; provider: string; connectionName: string | null };
  latencyMs: number;
  tokensIn?: number;
  tokensOut?: number;
  /** Null when no price is known for the model. */
  costUsd?: number | null;
  error?: string;
}

export function formatModelTest(r: ModelTest): string {
  if (!r.ok) return `failed: ${r.model}: ${commandHints(r.error ?? '')} (${ms(r.latencyMs)})`;
  const via = r.served!.model === r.model ? '' : ` for ${r.model}`;
  const account = r.served!.connectionName ? ` (account ${r.served!.connectionName})` : '';
  return `ok: ${r.served!.model}${account} answered${via} in ${ms(r.latencyMs)}, ${r.tokensIn}>${r.tokensOut} tok, ${cost(r.costUsd)}`;
}

export function register(program: Command, ctx: CommandContext): void {
  const models = examples(withCommon(program.command('models')), [
    'router models                      # what you can call now',
    'router models --provider openai',
    'router models --all --search sonnet  # the whole catalog, with why a model is unavailable',
    'router models --json',
  ])
    .description('list the models you can call now: combos, providers with a connection, running local servers (Ollama, LM Studio)')
    .option('--all', 'the whole catalog, marking models without a connection or whose local server does not answer')
    .option('--provider <provider>', "only this provider's models ('combo' for combos)")
    .option('--search <text>', 'only models whose id contains this text (case-insensitive)')
    .option('--json', 'print JSON (an array of {id, provider, contextLength, source, available, availability})')
    .action(
      ctx.run(async (opts) => {
        let rows = await loadModels(ctx, opts, Boolean(opts.all));
        if (opts.provider) rows = rows.filter((r) => r.provider === opts.provider);
        if (opts.search) rows = rows.filter((r) => r.id.toLowerCase().includes(String(opts.search).toLowerCase()));
        ctx.emit(opts, rows, () => formatModels(rows, Boolean(opts.all)));
        return 0;
      }),
    );

  examples(withCommon(models.command('test <model>')), ['router models test openai/gpt-4o-mini', 'router models test my-combo --json'])
    .description('send a real one-token request to a model or combo through router; says which target answered, latency and cost; exit 1 when it fails')
    .option('--json', 'print {ok, model, served, latencyMs, tokensIn, tokensOut, costUsd | error}')
    .action(
      ctx.run(async (opts, model: string) => {
        const r = await ctx.client(opts).request<ModelTest>('POST', '/api/models/test', { model }, 90_000);
        ctx.emit(opts, r, () => formatModelTest(r));
        return r.ok ? 0 : 1;
      }),
    );
}
