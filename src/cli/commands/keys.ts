import type { Command } from 'commander';
import type { ApiKeyRecord, CreatedApiKey } from '../../shared/wire.js';
import { DaemonClient } from '../client.js';
import { table } from '../io.js';
import { resolveTarget } from '../target.js';
import { examples, withCommon, type CommandContext } from '../common.js';

const collect = (value: string, prev: string[] = []) => [...prev, value];

export function register(program: Command, ctx: CommandContext): void {
  const { io } = ctx;
  const keys = program.command('keys').description('manage API keys');
  const client = (opts: object) => new DaemonClient(resolveTarget(opts), io.err);

  withCommon(keys.command('add'))
    .description('create an API key (shown once)')
    .requiredOption('--name <name>', 'a name for the key')
    .option('--scope <scope>', 'proxy, manage or model:<pattern>; repeatable (default: proxy)', collect)
    .option('--json', 'print {id, name, key, scopes}')
    .addHelpText('after', '\nExamples:\n  router keys add --name laptop\n  router keys add --name admin --scope proxy --scope manage --json')
    .action(
      ctx.run(async (opts) => {
        const created = await client(opts).request<CreatedApiKey>('POST', '/api/keys', { name: opts.name, scopes: opts.scope });
        if (opts.json) io.out(JSON.stringify({ id: created.id, name: created.name, key: created.key, scopes: created.scopes }));
        else io.out(`created key ${created.name} (${created.id})\n\n  ${created.key}\n\nStore it now: it is not shown again.`);
        return 0;
      }),
    );

  examples(withCommon(keys.command('list')), ['router keys list', 'router keys list --json'])
    .description('list API keys (masked)')
    .option('--json', 'print JSON')
    .action(
      ctx.run(async (opts) => {
        const { keys: list } = await client(opts).request<{ keys: ApiKeyRecord[] }>('GET', '/api/keys');
        if (opts.json) io.out(JSON.stringify(list));
        else if (list.length === 0) io.out('no API keys; create one with `router keys add --name <name>`');
        else {
          const rows = list.map((k) => [k.id, k.name, k.maskedKey, k.scopes.join(','), k.isActive ? 'active' : 'inactive', k.lastUsedAt ?? '-']);
          io.out(table(['ID', 'NAME', 'KEY', 'SCOPES', 'STATE', 'LAST USED'], rows));
        }
        return 0;
      }),
    );

  examples(withCommon(keys.command('rename <id> <name>')), ['router keys rename 3f2a... laptop-2'])
    .description('rename an API key')
    .action(
      ctx.run(async (opts, id: string, name: string) => {
        const rec = await client(opts).request<ApiKeyRecord>('PATCH', `/api/keys/${encodeURIComponent(id)}`, { name });
        io.out(`renamed ${rec.id} to ${rec.name}`);
        return 0;
      }),
    );

  examples(withCommon(keys.command('rm <id>')), ['router keys rm 3f2a...'])
    .description('delete an API key')
    .action(
      ctx.run(async (opts, id: string) => {
        await client(opts).request('DELETE', `/api/keys/${encodeURIComponent(id)}`);
        io.out(`deleted ${id}`);
        return 0;
      }),
    );
}
