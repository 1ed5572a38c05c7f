import type { Command } from 'commander';
import { COMBO_STRATEGIES, DEFAULT_COMBO_STRATEGY, type ComboModel, type ComboRecord } from '../../shared/records.js';
import { DaemonClient } from '../client.js';
import { CliError, table } from '../io.js';
import { stamp } from '../format.js';
import { resolveTarget } from '../target.js';
import { examples, withCommon, type CommandContext } from '../common.js';

const collect = (value: string, prev: string[] = []) => [...prev, value];

const STRATEGIES = COMBO_STRATEGIES.map((s) => (s === DEFAULT_COMBO_STRATEGY ? `${s} (default)` : s)).join(', ');
const AFFINITY =
  'cache affinity: off (default), session (keep a conversation on one account and target, by X-Router-Session-Id or the client\'s own session markers) or prefix (also by its first system and user content)';

const HEDGE = "hedged requests: when a target sent no byte within this many ms, start the next target too and serve the first to answer ('none' for off)";
const RECOVERY = "a stream cut or stalled after its first byte: error (end with the client format's error event), continue (go on with the next target, same client stream) or off";
const CONTEXT_FIT = "skip targets whose context window cannot hold the request: on or off";

/** The routing options of add and edit (hedging, recovery mid-stream, context fit), as body fields. */
function routingFields(opts: { hedgeAfter?: string; midStreamRecovery?: string; contextFit?: string }): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  const hedge = opts.hedgeAfter;
  if (hedge !== undefined) {
    if (hedge !== 'none' && !/^\d+$/.test(hedge)) throw new CliError(`--hedge-after expects milliseconds as a whole number or 'none', got '${hedge}'`, 2);
    body.hedgeAfterMs = hedge === 'none' ? null : Number(hedge);
  }
  // Any other word is the daemon's to refuse (its message lists the modes).
  if (opts.midStreamRecovery !== undefined) body.midStreamRecovery = opts.midStreamRecovery === 'off' ? null : opts.midStreamRecovery;
  const fit = opts.contextFit;
  if (fit !== undefined) {
    if (fit !== 'on' && fit !== 'off') throw new CliError(`--context-fit expects on or off, got '${fit}'`, 2);
    body.contextFit = fit === 'on';
  }
  return body;
}

/** `--weight M=W` values as a map; the model part may itself contain `=`, so the last one splits. */
function parseWeights(values: string[] | undefined): Map<string, number> {
  const out = new Map<string, number>();
  for (const raw of values ?? []) {
    const eq = raw.lastIndexOf('=');
    const model = eq > 0 ? raw.slice(0, eq) : '';
    const weight = eq > 0 && raw.slice(eq + 1).trim() !== '' ? Number(raw.slice(eq + 1)) : NaN;
    if (!model || !Number.isFinite(weight)) throw new CliError(`--weight expects MODEL=NUMBER, got '${raw}'`, 2);
    out.set(model, weight);
  }
  return out;
}

/** Applies weights to a model list; a weight for a model that is not listed is a mistake worth reporting. */
function applyWeights(models: ComboModel[], weights: Map<string, number>): ComboModel[] {
  for (const model of weights.keys()) {
    if (!models.some((m) => m.model === model)) throw new CliError(`--weight names '${model}', which is not among the combo's models`, 2);
  }
  return models.map((m) => (weights.has(m.model) ? { model: m.model, weight: weights.get(m.model)! } : m));
}

/** `--target-timeout MS`; `none` clears it (edit). */
function parseTimeout(raw: string | undefined, allowNone: boolean): number | null | undefined {
  if (raw === undefined) return undefined;
  if (allowNone && raw === 'none') return null;
  if (!/^\d+$/.test(raw)) throw new CliError(`--target-timeout expects milliseconds as a whole number${allowNone ? " or 'none'" : ''}, got '${raw}'`, 2);
  return Number(raw);
}

const describeModels = (models: readonly ComboModel[]) =>
  models.map((m) => (m.weight === undefined ? m.model : `${m.model}=${m.weight}`)).join(', ');

const describeTimeout = (ms: number | null) => (ms === null ? '-' : `${ms}ms`);

function details(c: ComboRecord): string {
  const lines = [
    `name:           ${c.name}`,
    `id:             ${c.id}`,
    `strategy:       ${c.strategy}`,
    `target timeout: ${c.targetTimeoutMs === null ? 'default' : `${c.targetTimeoutMs} ms`}`,
    `affinity:       ${c.affinity ?? 'off'}`,
    `hedge after:    ${c.hedgeAfterMs == null ? 'off' : `${c.hedgeAfterMs} ms`}`,
    `mid-stream:     ${c.midStreamRecovery ?? 'off'}`,
    `context fit:    ${c.contextFit ? 'on' : 'off'}`,
    `created:        ${stamp(c.createdAt)} UTC`,
    `updated:        ${stamp(c.updatedAt)} UTC`,
    'models:',
    ...c.models.map((m, i) => `  ${i + 1}. ${m.model}${m.weight === undefined ? '' : `  (weight ${m.weight})`}`),
  ];
  return lines.join('\n');
}

export function register(program: Command, ctx: CommandContext): void {
  const { io } = ctx;
  const combos = program
    .command('combos')
    .description('manage combos: named groups of models a request can address by name, with failover');
  const client = (opts: object) => new DaemonClient(resolveTarget(opts), io.err);

  /** Finds a combo by name through the list (names are unique). */
  async function byName(c: DaemonClient, name: string): Promise<ComboRecord> {
    const { combos: list } = await c.request<{ combos: ComboRecord[] }>('GET', '/api/combos');
    const found = list.find((x) => x.name === name);
    if (!found) throw new CliError(`no such combo '${name}'; see \`router combos list\``);
    return found;
  }

  withCommon(combos.command('add <name>'))
    .description('create a combo')
    .option('--strategy <strategy>', STRATEGIES)
    .option('--model <model>', '<provider>/<model> or another combo name; repeatable, in priority order', collect)
    .option('--weight <model=weight>', 'weight of a listed model (read by the weighted strategy); repeatable', collect)
    .option('--target-timeout <ms>', 'per-target timeout in milliseconds (100..600000)')
    .option('--affinity <mode>', AFFINITY)
    .option('--hedge-after <ms>', HEDGE)
    .option('--mid-stream-recovery <mode>', RECOVERY)
    .option('--context-fit <on|off>', CONTEXT_FIT)
    .option('--json', 'print the created combo as JSON')
    .addHelpText(
      'after',
      [
        '',
        'Examples:',
        '  router combos add fast --model groq/llama-3.3-70b-versatile --model openai/gpt-4o-mini',
        '  router combos add split --strategy weighted --model openai/gpt-4o --model anthropic/claude-sonnet-4-5 \\',
        '      --weight openai/gpt-4o=3 --weight anthropic/claude-sonnet-4-5=1 --target-timeout 30000',
        '  router combos add safe --model fast --model ollama/llama3.2   # a combo may list other combos',
        '  router combos add pool --strategy round-robin --affinity session --model codex/gpt-5 --model openai/gpt-5',
        '  router combos add steady --hedge-after 1500 --mid-stream-recovery continue --context-fit on \\',
        '      --model anthropic/claude-sonnet-4-5 --model openai/gpt-5',
      ].join('\n'),
    )
    .action(
      ctx.run(async (opts, name: string) => {
        const list: string[] = opts.model ?? [];
        if (list.length === 0) throw new CliError('at least one --model is required', 2);
        const models = applyWeights(
          list.map((model) => ({ model })),
          parseWeights(opts.weight),
        );
        const body: Record<string, unknown> = { name, models };
        if (opts.strategy !== undefined) body.strategy = opts.strategy;
        const timeout = parseTimeout(opts.targetTimeout, false);
        if (timeout !== undefined) body.targetTimeoutMs = timeout;
        if (opts.affinity !== undefined) body.affinity = opts.affinity;
        Object.assign(body, routingFields(opts));
        const created = await client(opts).request<ComboRecord>('POST', '/api/combos', body);
        if (opts.json) io.out(JSON.stringify(created));
        else io.out(`created combo ${created.name} (${created.strategy}): ${describeModels(created.models)}`);
        return 0;
      }),
    );

  examples(withCommon(combos.command('list')), ['router combos list', 'router combos list --json'])
    .description('list combos')
    .option('--json', 'print JSON (an array of combos)')
    .action(
      ctx.run(async (opts) => {
        const { combos: list } = await client(opts).request<{ combos: ComboRecord[] }>('GET', '/api/combos');
        if (opts.json) io.out(JSON.stringify(list));
        else if (list.length === 0) io.out('no combos; create one with `router combos add <name> --model <provider>/<model>`');
        else {
          const rows = list.map((c) => [c.name, c.strategy, describeModels(c.models), describeTimeout(c.targetTimeoutMs)]);
          io.out(table(['NAME', 'STRATEGY', 'MODELS', 'TIMEOUT'], rows, [], { flex: [0, 2] }));
        }
        return 0;
      }),
    );

  withCommon(combos.command('show <name>'))
    .description('show one combo')
    .option('--json', 'print JSON')
    .addHelpText('after', '\nExample:\n  router combos show fast --json')
    .action(
      ctx.run(async (opts, name: string) => {
        const combo = await byName(client(opts), name);
        io.out(opts.json ? JSON.stringify(combo) : details(combo));
        return 0;
      }),
    );

  withCommon(combos.command('edit <name>'))
    .description('change a combo; options not given keep their current value')
    .option('--strategy <strategy>', STRATEGIES)
    .option('--model <model>', 'replaces the whole model list; repeatable, in priority order', collect)
    .option('--weight <model=weight>', 'set the weight of a listed model; repeatable', collect)
    .option('--target-timeout <ms>', "per-target timeout in milliseconds, or 'none' for the default")
    .option('--affinity <mode>', AFFINITY)
    .option('--hedge-after <ms>', HEDGE)
    .option('--mid-stream-recovery <mode>', RECOVERY)
    .option('--context-fit <on|off>', CONTEXT_FIT)
    .option('--rename <new-name>', 'give the combo a new name')
    .option('--json', 'print the updated combo as JSON')
    .addHelpText(
      'after',
      [
        '',
        'Examples:',
        '  router combos edit fast --strategy round-robin',
        '  router combos edit fast --model openai/gpt-4o-mini --model groq/llama-3.1-8b-instant',
        '  router combos edit split --weight openai/gpt-4o=5 --target-timeout none',
        '  router combos edit steady --hedge-after none --mid-stream-recovery error',
      ].join('\n'),
    )
    .action(
      ctx.run(async (opts, name: string) => {
        const c = client(opts);
        const current = await byName(c, name);
        const given: string[] | undefined = opts.model;
        const base: ComboModel[] = given ? given.map((model) => ({ model })) : current.models.map((m) => ({ ...m }));
        const timeout = parseTimeout(opts.targetTimeout, true);
        const body = {
          name: opts.rename ?? current.name,
          strategy: opts.strategy ?? current.strategy,
          models: applyWeights(base, parseWeights(opts.weight)),
          targetTimeoutMs: timeout === undefined ? current.targetTimeoutMs : timeout,
          affinity: opts.affinity ?? current.affinity ?? 'off',
          hedgeAfterMs: current.hedgeAfterMs ?? null,
          midStreamRecovery: current.midStreamRecovery ?? null,
          contextFit: current.contextFit ?? false,
          ...routingFields(opts),
        };
        const updated = await c.request<ComboRecord>('PUT', `/api/combos/${encodeURIComponent(current.id)}`, body);
        if (opts.json) io.out(JSON.stringify(updated));
        else io.out(`updated combo ${updated.name} (${updated.strategy}): ${describeModels(updated.models)}`);
        return 0;
      }),
    );

  examples(withCommon(combos.command('rm <name>')), ['router combos rm fast'])
    .description('delete a combo (refused while another combo lists it)')
    .action(
      ctx.run(async (opts, name: string) => {
        const c = client(opts);
        const combo = await byName(c, name);
        await c.request('DELETE', `/api/combos/${encodeURIComponent(combo.id)}`);
        io.out(`deleted combo ${combo.name}`);
        return 0;
      }),
    );
}
