import { InvalidArgumentError, type Command } from 'commander';
import type { DaemonClient } from '../client.js';
import { CliError, table, type Io } from '../io.js';
import { ms, stamp } from '../format.js';
import { askHidden, readStdin } from '../prompt.js';
import { examples, withCommon, type CommandContext } from '../common.js';
import { circuitDisplay } from '../../shared/circuit.js';
import type { CatalogProvider, ProviderNode, PublicConnection, ResilienceReply } from '../types.js';

const collect = (value: string, prev: string[] = []) => [...prev, value];

/** Finds a connection by id, by name, or by provider id when that provider has exactly one connection. */
export async function findConnection(c: DaemonClient, ref: string): Promise<PublicConnection> {
  const { connections } = await c.call('GET /api/providers');
  const byId = connections.find((x) => x.id === ref);
  if (byId) return byId;
  for (const [what, matches] of [
    ['named', connections.filter((x) => x.name === ref)],
    ['of provider', connections.filter((x) => x.provider === ref || x.providerId === ref)],
  ] as const) {
    if (matches.length === 1) return matches[0]!;
    if (matches.length > 1) throw new CliError(`${matches.length} connections are ${what} '${ref}'; use the id (see \`router providers list\`)`);
  }
  throw new CliError(`no such connection '${ref}'; see \`router providers list\``);
}

/** The connections table; the circuit column comes from the breaker state of each provider. */
export function formatConnections(list: PublicConnection[], resilience?: ResilienceReply): string {
  if (list.length === 0) return 'no connections; add one with `router providers add <provider> --api-key-stdin`';
  const breakers = resilience?.breakers ?? [];
  const cooling = new Map<string, number>();
  for (const c of resilience?.cooldowns ?? []) cooling.set(c.connectionId, (cooling.get(c.connectionId) ?? 0) + 1);
  const rows = list.map((c) => [
    c.id,
    c.provider,
    c.name,
    c.apiKey ?? c.accessToken ?? c.cookie ?? '-',
    String(c.priority),
    c.isActive ? 'active' : 'inactive',
    c.testStatus ?? '-',
    circuitDisplay(breakers, c.provider).text,
    cooling.has(c.id) ? `${cooling.get(c.id)} model(s)` : '-',
  ]);
  return table(['ID', 'PROVIDER', 'NAME', 'CREDENTIAL', 'PRIORITY', 'STATE', 'TEST', 'CIRCUIT', 'COOLDOWN'], rows, [4], { flex: [2, 7] });
}

export function formatCatalog(list: CatalogProvider[]): string {
  const rows = list.map((p) => [p.id, p.kind, p.format, p.authKinds.join(','), p.baseUrl ?? '(set per connection: --base-url)']);
  return table(['PROVIDER', 'KIND', 'FORMAT', 'AUTH', 'BASE URL'], rows, [], { flex: [3, 4] });
}

export function formatNodes(list: ProviderNode[]): string {
  if (list.length === 0) return 'no provider nodes; add one with `router providers nodes add --name N --prefix P --type openai-compatible --base-url URL`';
  const rows = list.map((n) => [n.id, n.prefix, n.name, n.type, n.apiType, n.baseUrl, stamp(n.createdAt)]);
  return table(['ID', 'PREFIX', 'NAME', 'TYPE', 'API', 'BASE URL', 'CREATED (UTC)'], rows, [], { flex: [2, 5] });
}

/** The credential of `providers add`: a flag, stdin, or a hidden prompt when the provider needs a key. */
async function credential(
  opts: { apiKey?: string; apiKeyStdin?: boolean; accessToken?: string },
  io: Io,
  needsKey: boolean,
  provider: string,
): Promise<Record<string, string>> {
  if (opts.apiKey && opts.apiKeyStdin) throw new CliError('give --api-key or --api-key-stdin, not both', 2);
  if (opts.apiKeyStdin) {
    const key = (await readStdin()).trim();
    if (!key) throw new CliError('--api-key-stdin read nothing from stdin', 2);
    return { apiKey: key };
  }
  if (opts.apiKey) return { apiKey: opts.apiKey };
  if (opts.accessToken) return { accessToken: opts.accessToken };
  if (needsKey && io.interactive) {
    const key = (await askHidden(`API key for ${provider} (input hidden, paste and press Enter): `)).trim();
    if (key) return { apiKey: key };
  }
  return {};
}

export function register(program: Command, ctx: CommandContext): void {
  const { io } = ctx;
  const providers = program
    .command('providers')
    .description('manage upstream providers: connections (accounts), custom nodes, model sync');

  examples(withCommon(providers.command('list')), ['router providers list', 'router providers list --json | jq ".[].id"'])
    .description('list connections (credentials masked) with their circuit and cooldown state')
    .option('--json', 'print JSON (an array of connections)')
    .action(
      ctx.run(async (opts) => {
        const c = ctx.client(opts);
        const [{ connections }, resilience] = await Promise.all([
          c.call('GET /api/providers'),
          c.call('GET /api/resilience'),
        ]);
        ctx.emit(opts, connections, () => formatConnections(connections, resilience));
        return 0;
      }),
    );

  examples(withCommon(providers.command('catalog')), ['router providers catalog', 'router providers catalog --kind local'])
    .description('list every provider router knows (built-in and nodes) with its kind and auth kinds')
    .option('--kind <kind>', 'only this kind (cloud, local, oauth, web-session, node)')
    .option('--json', 'print JSON')
    .action(
      ctx.run(async (opts) => {
        const { providers: list } = await ctx.client(opts).call('GET /api/providers/catalog');
        const shown = opts.kind ? list.filter((p) => p.kind === opts.kind) : list;
        ctx.emit(opts, shown, () => formatCatalog(shown));
        return 0;
      }),
    );

  examples(withCommon(providers.command('add <provider>')), [
    'printf %s "$OPENAI_API_KEY" | router providers add openai --api-key-stdin',
    'router providers add anthropic --name work   # asks for the key on a terminal',
    'router providers add openai --name proxy --base-url http://127.0.0.1:8080/v1 --api-key-stdin',
    'router providers add ollama                 # local providers need no key',
  ])
    .description('add a connection (an account) to a provider: a built-in id, a node id or a node prefix')
    .option('--name <name>', 'a name for the connection (default: the provider name)')
    .option('--api-key <key>', 'the API key (visible in shell history; prefer --api-key-stdin)')
    .option('--api-key-stdin', 'read the API key from stdin')
    .option('--access-token <token>', 'an OAuth access token instead of an API key')
    .option('--base-url <url>', "override the provider's base URL (include the version segment, e.g. /v1)")
    .option('--priority <n>', 'lower is tried first among accounts of a provider', (v) => {
      if (!/^\d+$/.test(v)) throw new InvalidArgumentError('expected a whole number.');
      return Number(v);
    })
    .option('--inactive', 'add it switched off')
    .option('--json', 'print the created connection as JSON (credentials masked)')
    .action(
      ctx.run(async (opts, provider: string) => {
        const c = ctx.client(opts);
        const { providers: catalog } = await c.call('GET /api/providers/catalog');
        const def = catalog.find((p) => p.id === provider || p.aliases.includes(provider));
        const needsKey = def ? !def.authKinds.includes('none') && def.authKinds.includes('api-key') : false;
        const body: Record<string, unknown> = { provider, ...(await credential(opts, io, needsKey, def?.id ?? provider)) };
        if (opts.name) body.name = opts.name;
        if (opts.priority !== undefined) body.priority = opts.priority;
        if (opts.baseUrl) body.providerSpecificData = { baseUrl: opts.baseUrl };
        if (opts.inactive) body.isActive = false;
        const created = await c.request<PublicConnection>('POST', '/api/providers', body);
        ctx.emit(opts, created, () => `added connection ${created.name} (${created.id}) to ${created.provider}; check it with \`router providers test ${created.id}\``);
        return 0;
      }),
    );

  examples(withCommon(providers.command('test [connection]')), ['router providers test openai', 'router providers test 6f1c... --json', 'router providers test --all'])
    .description('check a connection (or --all of them, 4 at a time) against its upstream (lists its models); exit 1 when one fails')
    .option('--all', 'test every connection')
    .option('--json', 'print {ok, models | error, latencyMs} (with --all: {ok, failed, results})')
    .action(
      ctx.run(async (opts, ref: string | undefined) => {
        const c = ctx.client(opts);
        if (opts.all) {
          type Result = { id: string; name: string; provider: string; ok: boolean; models?: number; error?: string; latencyMs: number };
          const r = await c.request<{ ok: number; failed: number; results: Result[] }>('POST', '/api/providers/test-all', {}, 120_000);
          ctx.emit(opts, r, () =>
            r.results.length === 0
              ? 'no connections yet: add one with `router providers add <provider>`'
              : table(
                  ['CONNECTION', 'PROVIDER', 'RESULT', 'LATENCY'],
                  r.results.map((x) => [x.name, x.provider, x.ok ? `ok, ${x.models} models` : `failed: ${x.error}`, ms(x.latencyMs)]),
                  [],
                  { flex: [0, 2] },
                ),
          );
          return r.failed > 0 ? 1 : 0;
        }
        if (!ref) throw new CliError('name a connection (id, name or provider) or pass --all', 2);
        const conn = await findConnection(c, ref);
        const r = await c.request<{ ok: boolean; models?: number; error?: string; latencyMs: number }>('POST', `/api/providers/${encodeURIComponent(conn.id)}/test`, undefined, 60_000);
        ctx.emit(opts, r, () =>
          r.ok ? `ok: ${conn.name} (${conn.provider}) answered in ${r.latencyMs} ms with ${r.models} models` : `failed: ${conn.name} (${conn.provider}): ${r.error}`,
        );
        return r.ok ? 0 : 1;
      }),
    );

  examples(withCommon(providers.command('rm <connection>')), ['router providers rm work'])
    .description('remove a connection (by id or unique name)')
    .action(
      ctx.run(async (opts, ref: string) => {
        const c = ctx.client(opts);
        const conn = await findConnection(c, ref);
        await c.request('DELETE', `/api/providers/${encodeURIComponent(conn.id)}`);
        io.out(`removed connection ${conn.name} (${conn.id})`);
        return 0;
      }),
    );

  examples(withCommon(providers.command('sync-models <connection>')), ['router providers sync-models openai'])
    .description("fetch the provider's model list upstream; it replaces the static list in the catalog")
    .option('--json', 'print {provider, count, models}')
    .action(
      ctx.run(async (opts, ref: string) => {
        const c = ctx.client(opts);
        const conn = await findConnection(c, ref);
        const r = await c.request<{ provider: string; count: number; models: unknown[] }>('POST', `/api/providers/${encodeURIComponent(conn.id)}/sync-models`, undefined, 60_000);
        ctx.emit(opts, r, () => `synced ${r.count} models of ${r.provider}; see \`router models --provider ${r.provider}\``);
        return 0;
      }),
    );

  examples(withCommon(providers.command('reset [provider]')), ['router providers reset openai', 'router providers reset   # every provider'])
    .description("close a provider's circuit breakers, its models' included (all of them when no provider is given)")
    .action(
      ctx.run(async (opts, ref?: string) => {
        // The daemon resolves the name (id, alias or node prefix) and refuses one that names nothing.
        const r = await ctx
          .client(opts)
          .request<{ provider: string | null; closed: number }>('POST', '/api/resilience/reset', ref === undefined ? {} : { provider: ref })
          .catch((err: unknown) => {
            if ((err as CliError).status === 404) throw new CliError(`no such provider '${ref}'; see \`router providers catalog\` and \`router providers nodes list\``);
            throw err;
          });
        const count = `${r.closed} circuit${r.closed === 1 ? '' : 's'}`;
        if (r.provider === null) io.out(r.closed ? `closed ${count}` : 'no circuit was open');
        else io.out(r.closed ? `closed ${count} of ${r.provider}` : `no circuit of ${r.provider} was open`);
        return 0;
      }),
    );

  registerNodes(providers, ctx);
}

/** `router providers nodes ...`: custom OpenAI- or Anthropic-compatible endpoints. */
function registerNodes(providers: Command, ctx: CommandContext): void {
  const { io } = ctx;
  const nodes = providers.command('nodes').description('custom endpoints (provider nodes) whose models are <prefix>/<model>');

  /** Finds a node by id or prefix. */
  async function findNode(c: DaemonClient, ref: string): Promise<ProviderNode> {
    const { nodes: list } = await c.request<{ nodes: ProviderNode[] }>('GET', '/api/provider-nodes');
    const found = list.find((n) => n.id === ref || n.prefix === ref);
    if (!found) throw new CliError(`no such provider node '${ref}'; see \`router providers nodes list\``);
    return found;
  }

  examples(withCommon(nodes.command('add')), [
    'router providers nodes add --name vllm --prefix vllm --type openai-compatible --base-url http://gpu-box:8000/v1',
    'router providers nodes add --name corp --prefix corp --type anthropic-compatible --base-url https://llm.corp/v1 --header X-Team=ml',
  ])
    .description('add a custom endpoint; then add a connection to it with `router providers add <prefix>`')
    .requiredOption('--name <name>', 'display name')
    .requiredOption('--prefix <prefix>', 'model prefix: requests name <prefix>/<model>')
    .requiredOption('--type <type>', 'openai-compatible or anthropic-compatible')
    .requiredOption('--base-url <url>', 'base URL including the version segment (e.g. https://host/v1)')
    .option('--api-type <type>', 'chat (default) or responses (OpenAI-compatible only)')
    .option('--header <name=value>', 'extra header sent upstream; repeatable', collect)
    .option('--token-limit-field <field>', 'output-limit field of chat requests: auto (default: max_completion_tokens for OpenAI reasoning models), max_tokens or max_completion_tokens')
    .option('--json', 'print the created node as JSON')
    .action(
      ctx.run(async (opts) => {
        const body: Record<string, unknown> = { name: opts.name, prefix: opts.prefix, type: opts.type, baseUrl: opts.baseUrl };
        if (opts.apiType) body.apiType = opts.apiType;
        if (opts.tokenLimitField) body.tokenLimitField = opts.tokenLimitField;
        if (opts.header) {
          const headers: Record<string, string> = {};
          for (const h of opts.header as string[]) {
            const eq = h.indexOf('=');
            if (eq <= 0) throw new CliError(`--header expects NAME=VALUE, got '${h}'`, 2);
            headers[h.slice(0, eq)] = h.slice(eq + 1);
          }
          body.customHeaders = headers;
        }
        const node = await ctx.client(opts).request<ProviderNode>('POST', '/api/provider-nodes', body);
        ctx.emit(opts, node, () => `added node ${node.name} (${node.id}); its models are ${node.prefix}/<model>`);
        return 0;
      }),
    );

  examples(withCommon(nodes.command('list')), ['router providers nodes list', 'router providers nodes list --json'])
    .description('list provider nodes')
    .option('--json', 'print JSON (an array of nodes)')
    .action(
      ctx.run(async (opts) => {
        const { nodes: list } = await ctx.client(opts).request<{ nodes: ProviderNode[] }>('GET', '/api/provider-nodes');
        ctx.emit(opts, list, () => formatNodes(list));
        return 0;
      }),
    );

  examples(withCommon(nodes.command('rm <node>')), ['router providers nodes rm vllm'])
    .description('remove a provider node (by id or prefix) and its connections (their credentials with them)')
    .action(
      ctx.run(async (opts, ref: string) => {
        const c = ctx.client(opts);
        const node = await findNode(c, ref);
        const { connections } = await c.call('GET /api/providers');
        const n = connections.filter((x) => x.providerId === node.id).length;
        await c.request('DELETE', `/api/provider-nodes/${encodeURIComponent(node.id)}`);
        io.out(`removed node ${node.name} (${node.id})${n ? ` and its ${n} connection${n === 1 ? '' : 's'}` : ''}`);
        return 0;
      }),
    );
}
