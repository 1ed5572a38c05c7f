import { InvalidArgumentError, type Command } from 'commander';
import { MEMORY_STRATEGIES, type MemoryEntry, type RetrieveResult } from '../../shared/records.js';
import { query } from '../client.js';
import { fit, int, pct } from '../format.js';
import { CliError, table, wrapLine } from '../io.js';
import { examples, withCommon, type CommandContext } from '../common.js';

const TYPES = ['factual', 'episodic', 'procedural', 'semantic'];
const STRATEGIES: string[] = [...MEMORY_STRATEGIES];

interface MemoryList {
  data: MemoryEntry[];
  total: number;
  totalPages: number;
  stats: { total: number; tokensUsed: number; hitRate: number; cacheStats: { hits: number; misses: number } };
}

const whole = (min: number, max: number) => (v: string) => {
  const n = Number(v);
  if (!/^\d+$/.test(v) || n < min || n > max) throw new InvalidArgumentError(`expected a whole number from ${min} to ${max}.`);
  return n;
};

const oneOf = (allowed: string[]) => (v: string) => {
  if (!allowed.includes(v)) throw new InvalidArgumentError(`expected one of ${allowed.join(', ')}.`);
  return v;
};

const scope = (apiKeyId: string | null) => apiKeyId ?? 'global';

export function formatMemories(r: MemoryList, page: number): string {
  if (r.data.length === 0) return 'no memories; add one with `router memory add <key> <content>`';
  const rows = r.data.map((m) => [m.id, m.type, fit(m.key, 24), fit(m.content.replace(/\s+/g, ' '), 48), String(m.tokens), String(m.hitCount), scope(m.apiKeyId)]);
  return [
    table(['ID', 'TYPE', 'KEY', 'CONTENT', 'TOKENS', 'HITS', 'SCOPE'], rows, [4, 5], { flex: [2, 3] }),
    '',
    `page ${page} of ${Math.max(1, r.totalPages)} · ${int(r.total)} memories · ${int(r.stats.tokensUsed)} tokens · hit rate ${pct(r.stats.hitRate)}`,
  ].join('\n');
}

export function formatRetrieval(r: RetrieveResult): string {
  const how = r.resolution;
  const head = `strategy ${how.strategyUsed} · embeddings ${how.embeddingSource ?? 'none'}${how.embeddingModel ? ` (${how.embeddingModel})` : ''} · vectors ${how.vectorStore}${how.rerankApplied ? ' · reranked' : ''}${how.fallbackReason ? ` · fallback: ${how.fallbackReason}` : ''}`;
  if (r.memories.length === 0) return `${wrapLine(head)}\nnothing retrieved`;
  const rows = r.memories.map((m) => [m.score.toFixed(3), m.tier, m.id, fit(m.key, 24), fit(m.content.replace(/\s+/g, ' '), 48), String(m.tokens)]);
  return [wrapLine(head), '', table(['SCORE', 'TIER', 'ID', 'KEY', 'CONTENT', 'TOKENS'], rows, [0, 5], { flex: [3, 4] }), '', `${int(r.totalTokensUsed)} of ${int(r.budgetMaxTokens)} tokens`].join('\n');
}

export function register(program: Command, ctx: CommandContext): void {
  const { io } = ctx;
  const memory = program.command('memory').description('the memory store: facts and episodes router can inject into conversations');

  examples(withCommon(memory.command('list')), ['router memory list', 'router memory list --type episodic --api-key-id 3f2a... --page 2', 'router memory list -q deploy --json'])
    .description('list memories, newest first (the global pool unless --api-key-id is given)')
    .option('--api-key-id <id>', "an API key's memories instead of the global pool")
    .option('--type <type>', TYPES.join(', '), oneOf(TYPES))
    .option('--session <id>', 'only this session')
    .option('-q, --query <text>', 'only memories whose key or content match this text')
    .option('--limit <n>', 'per page (1..200)', whole(1, 200), 50)
    .option('--page <n>', 'page number', whole(1, 1_000_000), 1)
    .option('--json', 'print {data, total, totalPages, stats}')
    .action(
      ctx.run(async (opts) => {
        const q = query({ apiKeyId: opts.apiKeyId, type: opts.type, sessionId: opts.session, q: opts.query, limit: opts.limit, page: opts.page });
        const r = await ctx.client(opts).request<MemoryList>('GET', `/api/memory${q}`);
        ctx.emit(opts, r, () => formatMemories(r, opts.page));
        return 0;
      }),
    );

  examples(withCommon(memory.command('add <key> <content>')), [
    'router memory add deploy "Production deploys run from the release branch only"',
    'router memory add user.editor "Prefers Neovim" --type semantic --api-key-id 3f2a...',
  ])
    .description('store a memory')
    .option('--type <type>', `${TYPES.join(', ')} (default factual)`, oneOf(TYPES))
    .option('--api-key-id <id>', "store it for one API key instead of the global pool")
    .option('--session <id>', 'tie it to a session')
    .option('--expires-at <time>', 'ISO 8601 date-time after which it is no longer used')
    .option('--metadata <json>', 'a JSON object of free keys')
    .option('--json', 'print the created memory as JSON')
    .action(
      ctx.run(async (opts, key: string, content: string) => {
        const body: Record<string, unknown> = { key, content };
        if (opts.type) body.type = opts.type;
        if (opts.apiKeyId) body.apiKeyId = opts.apiKeyId;
        if (opts.session) body.sessionId = opts.session;
        if (opts.expiresAt) body.expiresAt = opts.expiresAt;
        if (opts.metadata) {
          try {
            body.metadata = JSON.parse(opts.metadata);
          } catch {
            throw new CliError(`--metadata expects a JSON object, got '${opts.metadata}'`, 2);
          }
        }
        const m = await ctx.client(opts).request<MemoryEntry>('POST', '/api/memory', body);
        ctx.emit(opts, m, () => `stored memory ${m.id} (${m.type}, ${m.tokens} tokens, ${scope(m.apiKeyId)})`);
        return 0;
      }),
    );

  examples(withCommon(memory.command('search <query>')), ['router memory search "how do we deploy"', 'router memory search deploy --strategy exact --json'])
    .description('what a query would retrieve, and how (a dry run: nothing changes)')
    .option('--strategy <strategy>', `${STRATEGIES.join(', ')} (default hybrid)`, oneOf(STRATEGIES))
    .option('--max-tokens <n>', 'token budget (1..16000)', whole(1, 16_000))
    .option('--limit <n>', 'most memories (1..100)', whole(1, 100))
    .option('--api-key-id <id>', "search an API key's memories instead of the global pool")
    .option('--json', 'print {memories, resolution, totalTokensUsed, budgetMaxTokens}')
    .action(
      ctx.run(async (opts, text: string) => {
        const body: Record<string, unknown> = { query: text };
        if (opts.strategy) body.strategy = opts.strategy;
        if (opts.maxTokens) body.maxTokens = opts.maxTokens;
        if (opts.limit) body.limit = opts.limit;
        if (opts.apiKeyId) body.apiKeyId = opts.apiKeyId;
        const r = await ctx.client(opts).request<RetrieveResult>('POST', '/api/memory/retrieve-preview', body, 60_000);
        ctx.emit(opts, r, () => formatRetrieval(r));
        return 0;
      }),
    );

  examples(withCommon(memory.command('rm <id>')), ['router memory rm 0b6c1f2e-...'])
    .description('delete a memory (and its vector)')
    .action(
      ctx.run(async (opts, id: string) => {
        await ctx
          .client(opts)
          .request('DELETE', `/api/memory/${encodeURIComponent(id)}`)
          .catch((err: CliError) => {
            throw err.status === 404 ? new CliError(`no such memory '${id}'; see \`router memory list\``) : err;
          });
        io.out(`deleted memory ${id}`);
        return 0;
      }),
    );
}
