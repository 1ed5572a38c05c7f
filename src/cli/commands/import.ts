import { readFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import type { Command } from 'commander';
import type { ConfirmedAccount, DiscoveredAccount, DiscoverReply, KeychainImportReply, TokenImportReply } from '../../shared/imports.js';
import { connectionError, replyError, type DaemonClient } from '../client.js';
import { examples, withCommon, type CommandContext } from '../common.js';
import { stamp } from '../format.js';
import { CliError, type Io, table } from '../io.js';

const REASONS: Record<KeychainImportReply['skipped'][number]['reason'], string> = {
  changed: 'its tokens changed since discovery; run `router import --discover` and confirm again',
  not_found: 'not found on this machine any more',
  unsupported: 'this router has no such provider',
};

/** `service:account[=fingerprint]`: the service never contains `:`, a fingerprint never contains `=`. */
export function parseSelector(raw: string): { service: string; account: string; fingerprint?: string } {
  const colon = raw.indexOf(':');
  if (colon <= 0 || colon === raw.length - 1) throw new CliError(`'${raw}' is not service:account (see \`router import --discover\`).`, 2);
  const service = raw.slice(0, colon);
  let account = raw.slice(colon + 1);
  const eq = account.lastIndexOf('=');
  const fingerprint = eq > 0 ? account.slice(eq + 1) : undefined;
  if (fingerprint !== undefined) account = account.slice(0, eq);
  return { service, account, ...(fingerprint ? { fingerprint } : {}) };
}

function accountsTable(accounts: DiscoveredAccount[], numbered = false): string {
  if (accounts.length === 0) return 'no importable logins found on the daemon\'s machine';
  const rows = accounts.map((a, i) => [
    ...(numbered ? [String(i + 1)] : []),
    `${a.service}:${a.account}`,
    a.provider + (a.importable ? '' : ' (not in this router)'),
    a.kind,
    a.expiresAt ? stamp(a.expiresAt) : '-',
    a.fingerprint,
  ]);
  return table([...(numbered ? ['#'] : []), 'ACCOUNT', 'PROVIDER', 'FROM', 'EXPIRES', 'FINGERPRINT'], rows, [], { flex: numbered ? [1, 3] : [0, 2] });
}

function importedLines(reply: KeychainImportReply): string {
  const lines = reply.imported.map((i) => `${i.connection.created ? 'imported' : 'refreshed'} ${i.service}:${i.account} -> ${i.connection.provider} connection '${i.connection.name}' (${i.connection.id})`);
  for (const s of reply.skipped) lines.push(`skipped ${s.service}:${s.account}: ${REASONS[s.reason]}`);
  return lines.join('\n') || 'nothing imported';
}

/** Picks accounts by number from the discovered list in a terminal; [] when the user cancels. */
async function chooseInteractively(io: Io, accounts: DiscoveredAccount[]): Promise<DiscoveredAccount[]> {
  const importable = accounts.filter((a) => a.importable);
  io.out(accountsTable(importable, true));
  if (importable.length === 0) return [];
  const answer = (await io.ask!('Import which? (numbers separated by commas, "all", or Enter to cancel) ')).trim().toLowerCase();
  if (!answer) return [];
  if (answer === 'all') return importable;
  return answer.split(/[\s,]+/).map((n) => {
    const a = importable[Number(n) - 1];
    if (!/^\d+$/.test(n) || !a) throw new CliError(`'${n}' is not a number from the list.`, 2);
    return a;
  });
}

/** Uploads one file as the raw body (archives). */
function upload(client: DaemonClient, path: string, body: Buffer, type: string): Promise<TokenImportReply> {
  return new Promise((resolve, reject) => {
    const headers = { ...client.authHeaders(), 'content-type': type, 'content-length': String(body.length) };
    const req = httpRequest(`${client.url}${path}`, { method: 'POST', headers, timeout: 60_000 }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('error', reject);
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        const status = res.statusCode ?? 0;
        if (status < 200 || status >= 300) reject(replyError(status, text, 'POST', path));
        else resolve(JSON.parse(text) as TokenImportReply);
      });
    });
    req.on('timeout', () => req.destroy(Object.assign(new Error('timed out'), { name: 'TimeoutError' })));
    req.on('error', (err) => reject(connectionError(err, client.url)));
    req.end(body);
  });
}

function readLocal(file: string): Buffer {
  try {
    return readFileSync(file);
  } catch (err) {
    throw new CliError(`cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
}

/** Token files: a zip archive as one upload, else the JSON files (one, or several in one bulk call). */
async function importFiles(client: DaemonClient, files: string[]): Promise<TokenImportReply> {
  const contents = files.map((f) => ({ file: f, data: readLocal(f) }));
  const zips = contents.filter((c) => c.data.subarray(0, 2).toString('latin1') === 'PK');
  if (zips.length > 0) {
    if (contents.length > 1) throw new CliError('give one archive, or JSON token files, not both.', 2);
    return upload(client, '/api/providers/agy-auth/zip-extract', zips[0]!.data, 'application/zip');
  }
  const docs = contents.map(({ file, data }) => {
    try {
      return JSON.parse(data.toString('utf8')) as unknown;
    } catch {
      throw new CliError(`${file} is not a JSON token file.`, 2);
    }
  });
  if (docs.length === 1) return client.request<TokenImportReply>('POST', '/api/providers/agy-auth/import', docs[0]);
  return client.request<TokenImportReply>('POST', '/api/providers/agy-auth/import-bulk', { files: docs });
}

export function register(program: Command, ctx: CommandContext): void {
  const { io } = ctx;
  examples(withCommon(program.command('import')), [
    'router import --discover',
    'router import --confirm "Claude Code-credentials:alice" "~/.codex/auth.json:dev@example.com"',
    'router import                  # pick from the list in a terminal',
    'router import --file antigravity-oauth-token.json',
    'router import --file tokens.zip',
  ])
    .description("import logins the subscription CLIs already hold on the daemon's machine (OS keychain, credential files), or Antigravity token files")
    .option('--discover', 'list importable accounts with their fingerprints (nothing is imported)')
    .option('--confirm <service:account...>', 'import these accounts (as --discover lists them; append =FINGERPRINT to insist on what you saw)')
    .option('--file <file...>', 'import Antigravity token files (JSON) or one zip archive of them')
    .option('--json', 'print JSON')
    .action(
      ctx.run(async (opts: { discover?: boolean; confirm?: string[]; file?: string[]; json?: boolean }) => {
        const modes = [opts.discover, opts.confirm, opts.file].filter(Boolean).length;
        if (modes > 1) throw new CliError('use one of --discover, --confirm and --file.', 2);
        const client = ctx.client(opts as never);
        if (opts.file) {
          const reply = await importFiles(client, opts.file);
          ctx.emit(opts, reply, () =>
            [...reply.imported.map((c) => `${c.created ? 'imported' : 'refreshed'} ${c.provider} connection '${c.name}' (${c.id})`), ...(reply.ignored ?? []).map((p) => `ignored ${p} (not a token file)`)].join('\n'),
          );
          return 0;
        }
        const discover = async () => (await client.request<DiscoverReply>('POST', '/api/providers/keychain/discover', undefined, 60_000)).accounts;
        if (opts.discover) {
          const accounts = await discover();
          ctx.emit(opts, { accounts }, () => accountsTable(accounts));
          return 0;
        }
        let confirmed: ConfirmedAccount[];
        if (opts.confirm) {
          const wanted = opts.confirm.map(parseSelector);
          const current = wanted.some((w) => !w.fingerprint) ? await discover() : [];
          confirmed = wanted.map((w) => {
            if (w.fingerprint) return { service: w.service, account: w.account, fingerprint: w.fingerprint };
            const found = current.find((a) => a.service === w.service && a.account === w.account);
            if (!found) throw new CliError(`${w.service}:${w.account} was not found; \`router import --discover\` lists what can be imported.`);
            return { service: found.service, account: found.account, fingerprint: found.fingerprint };
          });
        } else {
          if (!io.interactive || !io.ask) throw new CliError('say what to import: --discover, --confirm <service:account...> or --file <file...> (no terminal to ask on).', 2);
          confirmed = (await chooseInteractively(io, await discover())).map(({ service, account, fingerprint }) => ({ service, account, fingerprint }));
          if (confirmed.length === 0) {
            io.out('nothing imported');
            return 0;
          }
        }
        const reply = await client.request<KeychainImportReply>('POST', '/api/providers/keychain/import', { confirmedAccounts: confirmed }, 60_000);
        ctx.emit(opts, reply, () => importedLines(reply));
        return reply.skipped.length > 0 ? 1 : 0;
      }),
    );
}
