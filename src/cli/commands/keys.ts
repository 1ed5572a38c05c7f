import { InvalidArgumentError, type Command } from 'commander';
import { MEMORY_STRATEGIES } from '../../shared/records.js';
import type { ApiKeyRecord, CreatedApiKey } from '../../shared/wire.js';
import type { DaemonClient } from '../client.js';
import { CliError, table } from '../io.js';
import { int, stamp } from '../format.js';
import { examples, withCommon, type CommandContext } from '../common.js';

const collect = (value: string, prev: string[] = []) => [...prev, value];

/** Per-key limits as `GET /api/keys` shows them. */
interface TokenLimit {
  scope: string;
  period: 'day' | 'month';
  limit: number;
}
/** A key's USD budget per UTC day or month. */
interface UsdBudget {
  period: 'day' | 'month';
  usd: number;
}
export type KeyView = ApiKeyRecord & { dailyRequestLimit: number | null; tokenLimits: TokenLimit[]; budget?: UsdBudget | null };

/** Every key, in creation order. */
export async function listKeys(c: DaemonClient): Promise<KeyView[]> {
  return (await c.call('GET /api/keys')).keys;
}

/** Finds a key by id or by name; a name two keys share must be given as an id. */
export async function findKey(c: DaemonClient, ref: string): Promise<KeyView> {
  const keys = await listKeys(c);
  const byId = keys.find((k) => k.id === ref);
  if (byId) return byId;
  const named = keys.filter((k) => k.name === ref);
  if (named.length === 1) return named[0]!;
  if (named.length > 1) throw new CliError(`${named.length} API keys are named '${ref}'; use the id (see \`router keys list\`)`);
  throw new CliError(`no such API key '${ref}'; see \`router keys list\``);
}

/**
 * Sends a create or rename; the daemon refuses a name another key has (409 `key_name_taken`, for the
 * dashboard too) unless --force asks for it, and the CLI adds how to override.
 */
async function withName<T>(send: () => Promise<T>): Promise<T> {
  try {
    return await send();
  } catch (err) {
    if (err instanceof CliError && err.status === 409) throw new CliError(`${err.message.replace(/\.$/, '')}, or pass --force`, 1, undefined, 409);
    throw err;
  }
}

// Option parsers check the text and return it as is: commander replaces a parsed null (or 0) by its own
// default, so the conversion to numbers happens in the action.

/** `12`, `0` or `unlimited`, or `default` (the daemon's defaultDailyRequestLimit setting). */
function requestLimit(raw: string): string {
  if (raw !== 'default' && raw !== 'unlimited' && !/^\d+$/.test(raw)) throw new InvalidArgumentError('expected a whole number, unlimited (0) or default.');
  return raw;
}

function tokenCount(raw: string): string {
  if (raw !== 'unlimited' && !/^\d+$/.test(raw)) throw new InvalidArgumentError('expected a whole number of tokens, or unlimited (0).');
  return raw;
}

const toNumber = (raw: string): number => (raw === 'unlimited' ? 0 : Number(raw));

function budgetUsd(raw: string): string {
  if (raw !== 'none' && !(/^\d+(\.\d+)?$/.test(raw) && Number(raw) > 0 && Number(raw) <= 1_000_000)) {
    throw new InvalidArgumentError('expected an amount in USD above 0 and up to 1000000 (e.g. 25 or 2.50), or none.');
  }
  return raw;
}

function budgetPeriod(raw: string): 'day' | 'month' {
  if (raw !== 'day' && raw !== 'month') throw new InvalidArgumentError('expected day or month.');
  return raw;
}

/** The `budget` field of a create or PATCH body from --budget / --budget-period (undefined: leave it). */
function budgetField(usd: string | undefined, period: 'day' | 'month' | undefined, current?: UsdBudget | null): UsdBudget | null | undefined {
  if (usd === 'none') return null;
  if (usd !== undefined) return { period: period ?? current?.period ?? 'month', usd: Number(usd) };
  if (period !== undefined) {
    if (!current) throw new CliError('--budget-period needs a budget: add --budget <usd>', 2);
    return { period, usd: current.usd };
  }
  return undefined;
}

const onOff = (raw: string): string => {
  if (raw !== 'on' && raw !== 'off') throw new InvalidArgumentError('expected on or off.');
  return raw;
};

const wholeIn = (min: number, max: number) => (raw: string) => {
  if (!/^\d+$/.test(raw) || Number(raw) < min || Number(raw) > max) throw new InvalidArgumentError(`expected a whole number from ${min} to ${max}.`);
  return raw;
};

const choice = (allowed: readonly string[]) => (raw: string) => {
  if (!allowed.includes(raw)) throw new InvalidArgumentError(`expected one of ${allowed.join(', ')}.`);
  return raw;
};

/** A key's use of memory, as `GET /api/memory/keys/{keyId}/settings` shows it. */
export interface KeyMemory {
  apiKeyId: string;
  inject: boolean;
  extract: boolean;
  injectMaxTokens: number;
  injectLimit: number;
  strategy: string;
  scope: string;
}

const SCOPES: Record<string, string> = { key: "the key's own memories", global: 'the global pool', both: "the key's own memories and the global pool" };

/** A key's memory settings as lines. */
export function formatKeyMemory(k: Pick<KeyView, 'id' | 'name'>, m: KeyMemory): string {
  const state = m.inject || m.extract ? 'on' : 'off';
  return [
    `memory of key ${k.name} (${k.id}): ${state}`,
    `  inject    ${m.inject ? 'on' : 'off'}  (up to ${m.injectLimit} memories, ${int(m.injectMaxTokens)} tokens, ${m.strategy} retrieval, from ${SCOPES[m.scope] ?? m.scope})`,
    `  extract   ${m.extract ? 'on' : 'off'}  (new memories from this key's conversations)`,
  ].join('\n');
}

/** The limits of one key as lines. */
export function formatLimits(k: KeyView): string {
  const daily = k.dailyRequestLimit === null ? 'default (the defaultDailyRequestLimit setting)' : k.dailyRequestLimit === 0 ? 'unlimited' : int(k.dailyRequestLimit);
  const lines = [`key ${k.name} (${k.id})`, `  requests per day  ${daily}`];
  if (k.tokenLimits.length === 0) lines.push('  token limits      none');
  for (const t of k.tokenLimits) lines.push(`  tokens per ${t.period.padEnd(5)}  ${t.limit === 0 ? 'unlimited' : int(t.limit)}${t.scope === 'global' ? '' : `  (${t.scope})`}`);
  lines.push(`  budget            ${k.budget ? `$${k.budget.usd} per UTC ${k.budget.period}` : 'none'}`);
  return lines.join('\n');
}

/** The keys table. */
export function formatKeys(list: KeyView[]): string {
  if (list.length === 0) return 'no API keys; create one with `router keys add --name <name>`';
  const rows = list.map((k) => [
    k.id,
    k.name,
    k.maskedKey,
    k.scopes.join(','),
    k.isActive ? 'active' : 'disabled',
    k.dailyRequestLimit === null ? 'default' : k.dailyRequestLimit === 0 ? 'unlimited' : int(k.dailyRequestLimit),
    stamp(k.lastUsedAt),
  ]);
  return table(['ID', 'NAME', 'KEY', 'SCOPES', 'STATE', 'REQ/DAY', 'LAST USED (UTC)'], rows, [], { flex: [1, 3] });
}

export function register(program: Command, ctx: CommandContext): void {
  registerBasics(program, ctx);
  registerMemory(program.commands.find((c) => c.name() === 'keys')!, ctx);
}

function registerMemory(keys: Command, ctx: CommandContext): void {
  examples(withCommon(keys.command('memory <key> [state]')), [
    'router keys memory laptop                  # show it',
    'router keys memory laptop on               # inject and extract',
    'router keys memory laptop off',
    'router keys memory laptop --inject on --extract off --limit 5 --max-tokens 800',
  ])
    .description("show or change a key's use of memory in conversations: on (inject and extract), off, or each part")
    .option('--inject <on|off>', 'inject relevant memories into its chat, messages and responses requests', onOff)
    .option('--extract <on|off>', 'extract new memories from its conversations (in the background)', onOff)
    .option('--max-tokens <n>', 'token budget of the injected memories (1..16000)', wholeIn(1, 16_000))
    .option('--limit <n>', 'most memories injected (1..100)', wholeIn(1, 100))
    .option('--strategy <s>', `retrieval: ${MEMORY_STRATEGIES.join(', ')}`, choice([...MEMORY_STRATEGIES]))
    .option('--scope <s>', "pools searched: key (its own), global, or both", choice(['key', 'global', 'both']))
    .option('--json', 'print {apiKeyId, inject, extract, injectMaxTokens, injectLimit, strategy, scope}')
    .action(
      ctx.run(async (opts, ref: string, state: string | undefined) => {
        if (state !== undefined && state !== 'on' && state !== 'off') throw new CliError(`expected on or off, got '${state}'; see \`router keys memory --help\``, 2);
        const c = ctx.client(opts);
        const key = await findKey(c, ref);
        const path = `/api/memory/keys/${encodeURIComponent(key.id)}/settings`;
        const patch: Record<string, unknown> = {};
        if (state) patch.inject = patch.extract = state === 'on';
        if (opts.inject) patch.inject = opts.inject === 'on';
        if (opts.extract) patch.extract = opts.extract === 'on';
        if (opts.maxTokens) patch.injectMaxTokens = Number(opts.maxTokens);
        if (opts.limit) patch.injectLimit = Number(opts.limit);
        if (opts.strategy) patch.strategy = opts.strategy;
        if (opts.scope) patch.scope = opts.scope;
        const m = await c.request<KeyMemory>(Object.keys(patch).length ? 'PUT' : 'GET', path, Object.keys(patch).length ? patch : undefined);
        ctx.emit(opts, m, () => formatKeyMemory(key, m));
        return 0;
      }),
    );
}

function registerBasics(program: Command, ctx: CommandContext): void {
  const { io } = ctx;
  const keys = program.command('keys').description('manage API keys (named by id or name)');

  withCommon(keys.command('add'))
    .description('create an API key (shown once)')
    .requiredOption('--name <name>', 'a name for the key (unique unless --force)')
    .option('--scope <scope>', 'proxy, manage or model:<pattern>; repeatable (default: proxy; model:<pattern> alone implies proxy)', collect)
    .option('--path <prefix>', 'only routes under this prefix (e.g. /v1/embeddings); repeatable; adds a path:<prefix> scope', collect)
    .option('--force', 'create it even when another key has this name')
    .option('--budget <usd>', 'spending limit in USD (reserved before each call, settled to the real cost after)', budgetUsd)
    .option('--budget-period <period>', 'day or month (UTC; default month)', budgetPeriod)
    .option('--json', 'print {id, name, key, scopes}')
    .addHelpText(
      'after',
      '\nExamples:\n  router keys add --name laptop\n  router keys add --name admin --scope proxy --scope manage --json\n  router keys add --name cheap --scope "model:openai/gpt-4o-mini*"   # proxy, restricted to those models\n  router keys add --name embed --path /v1/embeddings   # proxy, embeddings only',
    )
    .action(
      ctx.run(async (opts) => {
        const c = ctx.client(opts);
        const paths = (opts.path ?? []).map((p: string) => `path:${p}`);
        const scopes = opts.scope || paths.length ? [...(opts.scope ?? []), ...paths] : undefined;
        const created = await withName(() =>
          c.request<CreatedApiKey>('POST', '/api/keys', {
            name: opts.name,
            scopes,
            ...(opts.force ? { allowDuplicateName: true } : {}),
            ...(opts.budget !== undefined || opts.budgetPeriod !== undefined ? { budget: budgetField(opts.budget, opts.budgetPeriod) ?? undefined } : {}),
          }),
        );
        if (opts.json) io.out(JSON.stringify({ id: created.id, name: created.name, key: created.key, scopes: created.scopes }));
        else io.out(`created key ${created.name} (${created.id}), scopes ${created.scopes.join(', ')}\n\n  ${created.key}\n\nStore it now: it is not shown again.`);
        return 0;
      }),
    );

  examples(withCommon(keys.command('list')), ['router keys list', 'router keys list --json'])
    .description('list API keys (masked)')
    .option('--json', 'print JSON')
    .action(
      ctx.run(async (opts) => {
        const list = await listKeys(ctx.client(opts));
        ctx.emit(opts, list, () => formatKeys(list));
        return 0;
      }),
    );

  examples(withCommon(keys.command('rename <key> <name>')), ['router keys rename laptop laptop-2', 'router keys rename 3f2a... laptop-2'])
    .description('rename an API key (by id or name)')
    .option('--force', 'rename even when another key has this name')
    .action(
      ctx.run(async (opts, ref: string, name: string) => {
        const c = ctx.client(opts);
        const key = await findKey(c, ref);
        const rec = await withName(() =>
          c.request<ApiKeyRecord>('PATCH', `/api/keys/${encodeURIComponent(key.id)}`, { name, ...(opts.force ? { allowDuplicateName: true } : {}) }),
        );
        io.out(`renamed key ${key.name} (${rec.id}) to ${rec.name}`);
        return 0;
      }),
    );

  examples(withCommon(keys.command('rm <key>')), ['router keys rm laptop', 'router keys rm 3f2a...'])
    .description('delete an API key (by id or name)')
    .action(
      ctx.run(async (opts, ref: string) => {
        const c = ctx.client(opts);
        const key = await findKey(c, ref);
        await c.request('DELETE', `/api/keys/${encodeURIComponent(key.id)}`);
        io.out(`deleted key ${key.name} (${key.id})`);
        return 0;
      }),
    );

  for (const [verb, active] of [['disable', false], ['enable', true]] as const) {
    examples(withCommon(keys.command(`${verb} <key>`)), [`router keys ${verb} laptop`])
      .description(active ? 'let a disabled API key authenticate again' : 'stop an API key from authenticating, without deleting it')
      .action(
        ctx.run(async (opts, ref: string) => {
          const c = ctx.client(opts);
          const key = await findKey(c, ref);
          await c.request('PATCH', `/api/keys/${encodeURIComponent(key.id)}`, { isActive: active });
          io.out(`${active ? 'enabled' : 'disabled'} key ${key.name} (${key.id})`);
          return 0;
        }),
      );
  }

  examples(withCommon(keys.command('limits <key>')), [
    'router keys limits laptop                         # show them',
    'router keys limits laptop --requests-per-day 500 --tokens-per-day 2000000',
    'router keys limits laptop --requests-per-day default --tokens-per-month unlimited',
    'router keys limits laptop --budget 25 --budget-period month   # USD; --budget none removes it',
  ])
    .description("show or change a key's daily request limit, its token limits and its USD budget (per UTC day or month)")
    .option('--requests-per-day <n>', 'requests per UTC day: a number, unlimited (0), or default (the defaultDailyRequestLimit setting)', requestLimit)
    .option('--tokens-per-day <n>', 'tokens per UTC day over every request of the key (unlimited or 0 removes it)', tokenCount)
    .option('--tokens-per-month <n>', 'tokens per UTC month over every request of the key (unlimited or 0 removes it)', tokenCount)
    .option('--budget <usd>', 'USD budget (none removes it)', budgetUsd)
    .option('--budget-period <period>', 'day or month (UTC; default: the current one, else month)', budgetPeriod)
    .option('--json', 'print {id, name, dailyRequestLimit, tokenLimits, budget}')
    .action(
      ctx.run(async (opts, ref: string) => {
        const c = ctx.client(opts);
        let key = await findKey(c, ref);
        const patch: Record<string, unknown> = {};
        if (opts.requestsPerDay !== undefined) patch.dailyRequestLimit = opts.requestsPerDay === 'default' ? null : toNumber(opts.requestsPerDay);
        const periods = [
          ['day', opts.tokensPerDay],
          ['month', opts.tokensPerMonth],
        ] as const;
        if (periods.some(([, raw]) => raw !== undefined)) {
          let limits = [...key.tokenLimits];
          for (const [period, raw] of periods) {
            if (raw === undefined) continue;
            const n = toNumber(raw);
            limits = limits.filter((l) => !(l.scope === 'global' && l.period === period));
            if (n > 0) limits.push({ scope: 'global', period, limit: n });
          }
          patch.tokenLimits = limits;
        }
        const budget = budgetField(opts.budget, opts.budgetPeriod, key.budget);
        if (budget !== undefined) patch.budget = budget;
        if (Object.keys(patch).length) key = await c.request<KeyView>('PATCH', `/api/keys/${encodeURIComponent(key.id)}`, patch);
        const view = { id: key.id, name: key.name, dailyRequestLimit: key.dailyRequestLimit, tokenLimits: key.tokenLimits, budget: key.budget ?? null };
        ctx.emit(opts, view, () => formatLimits(key));
        return 0;
      }),
    );
}
