import { z } from 'zod';
import type { AuthInfo } from '../auth/pipeline.js';
import { RouterError } from '../http/errors.js';
import { MEMORY_STRATEGIES, MEMORY_TYPES } from '../../shared/records.js';
import { openAiModelList } from '../proxy/catalog.js';
import { internalConverse } from '../proxy/internal-call.js';
import type { PipelineDeps } from '../proxy/deps.js';
import type { KeyStore } from '../keys/store.js';
import type { MemoryService } from '../memory/service.js';
import type { WebhookService } from '../webhooks/service.js';
import type { IrMessage } from '../translate/ir.js';
import { replyText } from '../translate/util/reply-text.js';

/**
 * Router's MCP tools (docs/agents.md). Each is a zod input schema, a description a model can act on and a
 * function over the services, run on behalf of the caller (its AuthInfo: a chat is counted against its key).
 * The MCP server (server.ts) and the assistant (copilot/) serve this same list.
 */
/** What the tools read: the request pipeline (chat, models, usage, health) plus keys, memory and webhooks. */
export interface ToolDeps extends PipelineDeps {
  keys: KeyStore;
  memory: MemoryService;
  webhooks: WebhookService;
}

export interface ToolContext {
  services: ToolDeps;
  auth: AuthInfo;
}

export interface ToolDef {
  name: string;
  title: string;
  description: string;
  input: z.ZodObject;
  /** True when the tool only reads (MCP `readOnlyHint`). */
  readOnly: boolean;
  run(ctx: ToolContext, args: any): unknown;
}

const tool = <S extends z.ZodObject>(d: Omit<ToolDef, 'input' | 'run'> & { input: S; run(ctx: ToolContext, args: z.infer<S>): unknown }): ToolDef =>
  d as ToolDef;

const isoTime = z.string().max(40).describe('ISO 8601 date-time or unix milliseconds');
function parseTime(s: string | undefined, name: string): number | undefined {
  if (s === undefined) return undefined;
  const n = /^\d{1,16}$/.test(s) ? Number(s) : Date.parse(s);
  if (!Number.isFinite(n)) throw new RouterError(400, `'${name}' is not a date-time: ${s.slice(0, 40)}`);
  return n;
}
function rangeOf(a: { from?: string; to?: string; hours?: number }): { from: number; to: number } {
  const to = parseTime(a.to, 'to') ?? Date.now() + 1;
  const from = parseTime(a.from, 'from') ?? to - (a.hours ?? 24) * 3_600_000;
  if (from > to) throw new RouterError(400, "'from' must not be after 'to'.");
  return { from, to };
}

const chatMessage = z.strictObject({
  role: z.enum(['system', 'user', 'assistant']),
  content: z.string().max(200_000),
});

export const TOOLS: readonly ToolDef[] = [
  tool({
    name: 'list_models',
    title: 'List models',
    description:
      'Lists the models router can route to: every `<provider>/<model>` id of a provider with an active connection, and every combo name (a combo is a named group of models with a strategy). Use an id from here as the `model` of the chat tool.',
    readOnly: true,
    input: z.strictObject({
      filter: z.string().max(200).optional().describe('Only ids containing this text (case-insensitive)'),
      limit: z.number().int().min(1).max(2000).default(200).describe('At most this many ids'),
    }),
    run({ services }, a) {
      const all = openAiModelList(services).data as Array<{ id: string; owned_by: string }>;
      const f = a.filter?.toLowerCase();
      const picked = f ? all.filter((m) => m.id.toLowerCase().includes(f)) : all;
      return { total: picked.length, models: picked.slice(0, a.limit).map((m) => ({ id: m.id, ownedBy: m.owned_by })) };
    },
  }),
  tool({
    name: 'list_combos',
    title: 'List combos',
    description: 'Lists routing combos: name, strategy (priority, round-robin...), the models each tries in order, and its per-target timeout.',
    readOnly: true,
    input: z.strictObject({}),
    run({ services }) {
      return { combos: services.combos.list().map((c) => ({ name: c.name, strategy: c.strategy, models: c.models, targetTimeoutMs: c.targetTimeoutMs, affinity: c.affinity, hedgeAfterMs: c.hedgeAfterMs, midStreamRecovery: c.midStreamRecovery, contextFit: c.contextFit })) };
    },
  }),
  tool({
    name: 'chat',
    title: 'Chat through router',
    description:
      'Sends a chat completion through router to any model or combo (failover, circuit breakers and quotas apply) and returns the reply text, the model that served it and the token usage. The call is recorded in the usage log against the caller (its API key when it used one).',
    readOnly: false,
    input: z.strictObject({
      model: z.string().min(1).max(300).describe('A `<provider>/<model>` id or a combo name (see list_models)'),
      messages: z.array(chatMessage).min(1).max(200).describe('The conversation, oldest first'),
      maxTokens: z.number().int().min(1).max(200_000).optional(),
      temperature: z.number().min(0).max(2).optional(),
    }),
    async run({ services, auth }, a) {
      const system = a.messages.filter((m) => m.role === 'system').map((m) => m.content).join('\n\n');
      const messages: IrMessage[] = a.messages
        .filter((m) => m.role !== 'system')
        .map((m) => ({ role: m.role as 'user' | 'assistant', parts: [{ type: 'text', text: m.content }] }));
      if (messages.length === 0) throw new RouterError(400, 'messages needs at least one user or assistant message.');
      const r = await internalConverse(services, {
        endpoint: 'mcp',
        model: a.model,
        auth,
        system: system || undefined,
        messages,
        maxTokens: a.maxTokens,
        temperature: a.temperature,
        timeoutMs: services.settings.get().requestDeadlineMs,
      });
      return {
        text: replyText(r.value),
        model: `${services.providers.label(r.target.provider.id)}/${r.target.model}`,
        finishReason: r.value.finishReason,
        usage: r.usage ?? null,
        traceId: r.traceId,
      };
    },
  }),
  tool({
    name: 'usage_summary',
    title: 'Usage and cost summary',
    description:
      'Totals of requests, errors, tokens (input, output, cache) and cost over a time range (default: the last 24 hours), optionally broken down by provider, model, key, connection, endpoint or combo.',
    readOnly: true,
    input: z.strictObject({
      from: isoTime.optional(),
      to: isoTime.optional(),
      hours: z.number().min(0.01).max(24 * 366).optional().describe('Range length when from is not given (default 24)'),
      by: z.enum(['provider', 'model', 'key', 'connection', 'endpoint', 'combo']).optional().describe('Also group the totals by this'),
    }),
    async run({ services }, a) {
      const r = rangeOf(a);
      await services.usage.flush();
      return {
        from: new Date(r.from).toISOString(),
        to: new Date(r.to).toISOString(),
        summary: await services.usage.repo.summary(r),
        ...(a.by ? { by: a.by, rows: (await services.usage.repo.breakdown(a.by, r)).slice(0, 100) } : {}),
      };
    },
  }),
  tool({
    name: 'provider_health',
    title: 'Provider health and circuits',
    description:
      'Health of every provider connection (active, last test result and error) and the circuit breakers (closed, open, half-open; failures; when an open circuit retries) with active cooldowns.',
    readOnly: true,
    input: z.strictObject({ provider: z.string().max(200).optional().describe('Only this provider (id or name)') }),
    run({ services }, a) {
      const only = a.provider ? services.providers.idFor(a.provider) : undefined;
      const r = services.resilience;
      for (const b of r.breakers.snapshot()) r.breakers.state(b.provider, b.model);
      return {
        connections: services.connections
          .list()
          .filter((c) => !only || c.provider === only)
          .map((c) => ({
            id: c.id,
            provider: services.providers.label(c.provider),
            name: c.name,
            isActive: c.isActive,
            testStatus: c.testStatus,
            lastError: c.lastError,
            lastTestedAt: c.lastTestedAt,
          })),
        breakers: r.breakers
          .snapshot()
          .filter((b) => !only || b.provider === only)
          .map((b) => ({ ...b, provider: services.providers.label(b.provider), openUntil: b.state === 'open' ? new Date(b.openUntil).toISOString() : null })),
        cooldowns: r.cooldowns.list(),
      };
    },
  }),
  tool({
    name: 'recent_errors',
    title: 'Recent errors',
    description: 'The most recent failed requests (HTTP status 400-599) from the request log, newest first: time, model, provider, status and error message.',
    readOnly: true,
    input: z.strictObject({
      limit: z.number().int().min(1).max(200).default(20),
      provider: z.string().max(200).optional(),
      model: z.string().max(300).optional(),
    }),
    async run({ services }, a) {
      await services.usage.flush();
      const page = await services.usage.repo.logs({
        status: { min: 400, max: 599 },
        provider: a.provider && services.providers.idFor(a.provider),
        model: a.model,
        limit: a.limit,
      });
      for (const e of page.logs) e.provider = services.providers.label(e.providerId);
      return { errors: page.logs };
    },
  }),
  tool({
    name: 'memory_search',
    title: 'Search memory',
    description: "Searches router's conversational memory (keyword and semantic retrieval) and returns the matching entries with scores. Modifies nothing.",
    readOnly: true,
    input: z.strictObject({
      query: z.string().min(1).max(10_000),
      strategy: z.enum(MEMORY_STRATEGIES).default('hybrid'),
      limit: z.number().int().min(1).max(100).default(10),
      apiKeyId: z.string().max(100).optional().describe("An API key's memory pool; omitted = the global pool"),
    }),
    run({ services }, a) {
      return services.memory.retrieve({ query: a.query, strategy: a.strategy, maxTokens: 4000, limit: a.limit, scopes: [a.apiKeyId ?? null], dryRun: true });
    },
  }),
  tool({
    name: 'memory_add',
    title: 'Add a memory',
    description: "Stores a memory entry (a fact, episode, procedure...) in router's memory; requests of keys with memory enabled may then retrieve it.",
    readOnly: false,
    input: z.strictObject({
      content: z.string().min(1).max(20_000),
      key: z.string().min(1).max(500).optional().describe('A short label for the entry (default: the start of the content)'),
      type: z.enum(MEMORY_TYPES).default('factual'),
      apiKeyId: z.string().max(100).optional().describe("An API key's memory pool; omitted = the global pool"),
    }),
    async run({ services }, a) {
      if (a.apiKeyId && !services.keys.get(a.apiKeyId)) throw new RouterError(404, 'API key not found.');
      const e = await services.memory.create({ type: a.type, key: a.key ?? a.content.slice(0, 80), content: a.content, apiKeyId: a.apiKeyId ?? null });
      return { id: e.id, type: e.type, key: e.key };
    },
  }),
  tool({
    name: 'list_webhooks',
    title: 'List webhooks',
    description: 'Lists the configured webhooks: id, URL, kind, subscribed events, enabled, last status and failure count.',
    readOnly: true,
    input: z.strictObject({}),
    run({ services }) {
      return {
        webhooks: services.webhooks.store.list().map((w) => ({
          id: w.id,
          url: w.url,
          kind: w.kind,
          events: w.events,
          enabled: w.enabled === 1,
          lastStatus: w.last_status,
          failureCount: w.failure_count,
        })),
      };
    },
  }),
  tool({
    name: 'webhook_test',
    title: 'Test a webhook',
    description: 'Sends one signed test.ping event to a webhook (no retries) and reports whether it was delivered, the HTTP status and the start of the reply.',
    readOnly: false,
    input: z.strictObject({ id: z.string().min(1).max(100).describe('The webhook id (see list_webhooks)') }),
    run({ services }, a) {
      const rec = services.webhooks.store.get(a.id);
      if (!rec) throw new RouterError(404, 'Webhook not found.');
      return services.webhooks.test(rec);
    },
  }),
];

export const TOOL_BY_NAME: ReadonlyMap<string, ToolDef> = new Map(TOOLS.map((t) => [t.name, t]));

/** The tool list as GET /api/mcp/tools shows it (JSON Schema of each input). */
export function toolCatalog(): Array<{ name: string; title: string; description: string; readOnly: boolean; inputSchema: unknown }> {
  return listedTools().map((t) => ({ name: t.name, title: t.title, description: t.description, readOnly: t.annotations.readOnlyHint, inputSchema: t.inputSchema }));
}

/** The tools as MCP `tools/list` shows them. */
let listed: unknown[] | undefined;
export function listedTools(): any[] {
  listed ??= TOOLS.map((t) => ({
    name: t.name,
    title: t.title,
    description: t.description,
    inputSchema: z.toJSONSchema(t.input, { io: 'input' }),
    annotations: { title: t.title, readOnlyHint: t.readOnly, openWorldHint: t.name === 'chat' || t.name === 'webhook_test' },
  }));
  return listed;
}
