import type { Command } from 'commander';
import { CliError, table } from '../io.js';
import { examples, withCommon, type CommandContext } from '../common.js';
import type { PriceEntry } from '../../shared/pricing.js';

/** A rate per million tokens, or `-` when it falls back (cache rates to input, reasoning to output). */
const rate = (n: number | null | undefined) => (n === null || n === undefined ? '-' : `$${n}`);

export function formatPricing(entries: PriceEntry[]): string {
  if (entries.length === 0) return 'no prices';
  const rows = entries.map((e) => [`${e.provider}/${e.model}`, rate(e.input), rate(e.output), rate(e.cacheRead), rate(e.cacheWrite), rate(e.reasoning), e.source === 'override' && e.hasDefault ? 'override (has default)' : e.source]);
  return `USD per million tokens; '-' bills cache tokens as input, reasoning as output\n${table(['MODEL', 'INPUT', 'OUTPUT', 'CACHE READ', 'CACHE WRITE', 'REASONING', 'SOURCE'], rows, [1, 2, 3, 4, 5])}`;
}

/** `<provider>/<model>` -> the route path of its price (the model may contain slashes). */
function pricePath(id: string): string {
  const slash = id.indexOf('/');
  if (slash <= 0 || slash === id.length - 1) throw new CliError(`expected <provider>/<model>, e.g. openai/gpt-4o or mynode/llama-3; got '${id}'`, 2);
  return `/api/pricing/${encodeURIComponent(id.slice(0, slash))}/${id.slice(slash + 1).split('/').map(encodeURIComponent).join('/')}`;
}

/** A rate option: a number (the daemon checks its range and names the field when it is refused). */
function usdOption(name: string, v: string | undefined): number | undefined {
  if (v === undefined) return undefined;
  const n = Number(v);
  if (v.trim() === '' || !Number.isFinite(n)) throw new CliError(`--${name} expects a number (USD per million tokens); got '${v}'`, 2);
  return n;
}

export function register(program: Command, ctx: CommandContext): void {
  const pricing = examples(withCommon(program.command('pricing')), [
    'router pricing list --provider anthropic',
    'router pricing set mynode/llama-3-70b --input 0.6 --output 0.8   # a price for your own endpoint',
    'router pricing set openai/gpt-4o --input 2 --output 8 --cache-read 0.5',
    'router pricing rm openai/gpt-4o                                  # back to the shipped price',
  ]).description("the price table router costs requests with: shipped prices and your overrides (the model catalog's prices apply where neither has the model)");

  examples(withCommon(pricing.command('list')), ['router pricing list', 'router pricing list --provider openai --json'])
    .description('list the shipped prices and your overrides, USD per million tokens')
    .option('--provider <provider>', "only this provider's prices (a node's prefix too)")
    .option('--json', 'print JSON (an array of {provider, model, input, output, cacheRead, cacheWrite, reasoning, source, hasDefault})')
    .action(
      ctx.run(async (opts) => {
        const qs = opts.provider ? `?provider=${encodeURIComponent(String(opts.provider))}` : '';
        const { pricing: entries } = await ctx.client(opts).request<{ pricing: PriceEntry[] }>('GET', `/api/pricing${qs}`);
        ctx.emit(opts, entries, () => formatPricing(entries));
        return 0;
      }),
    );

  examples(withCommon(pricing.command('set <model>')), ['router pricing set openai/gpt-4o --input 2.5 --output 10 --cache-read 1.25', 'router pricing set gpu/qwen3-32b --input 0 --output 0'])
    .description('set your price for <provider>/<model> (replaces the whole price; it wins over the shipped one and the catalog, and applies to new requests at once)')
    .requiredOption('--input <usd>', 'USD per million input tokens')
    .requiredOption('--output <usd>', 'USD per million output tokens')
    .option('--cache-read <usd>', 'USD per million cache-read tokens (default: the input rate)')
    .option('--cache-write <usd>', 'USD per million cache-write tokens (default: the input rate)')
    .option('--reasoning <usd>', 'USD per million reasoning tokens (default: the output rate)')
    .option('--json', 'print the entry as JSON')
    .action(
      ctx.run(async (opts, model: string) => {
        const body: Record<string, number> = {};
        for (const [flag, field] of [['input', 'input'], ['output', 'output'], ['cache-read', 'cacheRead'], ['cache-write', 'cacheWrite'], ['reasoning', 'reasoning']] as const) {
          const n = usdOption(flag, opts[field]);
          if (n !== undefined) body[field] = n;
        }
        const entry = await ctx.client(opts).request<PriceEntry>('PUT', pricePath(model), body);
        ctx.emit(opts, entry, () => `price set: ${formatPricing([entry]).split('\n').slice(1).join('\n')}`);
        return 0;
      }),
    );

  examples(withCommon(pricing.command('rm <model>')), ['router pricing rm openai/gpt-4o'])
    .description('remove your price for <provider>/<model> (the shipped price, or the catalog, applies again)')
    .option('--json', 'print {deleted, pricing} as JSON')
    .action(
      ctx.run(async (opts, model: string) => {
        const r = await ctx.client(opts).request<{ deleted: boolean; pricing: PriceEntry | null }>('DELETE', pricePath(model));
        ctx.emit(opts, r, () => (r.pricing ? `price removed: ${model} is back to the shipped price ($${r.pricing.input} in, $${r.pricing.output} out)` : `price removed: ${model} has no shipped price (the catalog's applies, if it has the model)`));
        return 0;
      }),
    );
}
