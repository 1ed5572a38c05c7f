import { createReadStream, createWriteStream, renameSync, statSync, unlinkSync } from 'node:fs';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { pipeline } from 'node:stream/promises';
import type { Command } from 'commander';
import { readPidFile } from '../../shared/pidfile.js';
import { BACKUP_PASSPHRASE_HEADER, type BackupRecord, type ImportReply } from '../../shared/wire.js';
import { connectionError, replyError, type DaemonClient } from '../client.js';
import { CliError, table } from '../io.js';
import { askHidden } from '../prompt.js';
import { resolveTarget } from '../target.js';
import { examples, withCommon, type CommandContext } from '../common.js';

/** The passphrase of an export that carries the secret key: $ROUTER_BACKUP_PASSPHRASE, else a hidden prompt. */
async function passphrase(confirmTwice: boolean): Promise<string> {
  const fromEnv = process.env.ROUTER_BACKUP_PASSPHRASE;
  if (fromEnv) return fromEnv;
  if (!process.stdin.isTTY) throw new CliError('--with-secrets needs a passphrase: set ROUTER_BACKUP_PASSPHRASE or run it in a terminal.', 2);
  const first = await askHidden('Passphrase for the secret key (input hidden): ');
  if (confirmTwice && (await askHidden('Same passphrase again: ')) !== first) throw new CliError('the passphrases differ.', 2);
  return first;
}

/** One raw exchange with the daemon: a file body up, or the reply body down into a file. */
function exchange(
  client: DaemonClient,
  method: string,
  path: string,
  headers: Record<string, string>,
  body: { file?: string; text?: string } = {},
): Promise<IncomingMessage> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(`${client.url}${path}`, { method, headers: { ...client.authHeaders(), ...headers } }, resolve);
    req.on('error', (err) => reject(connectionError(err, client.url)));
    if (body.file) createReadStream(body.file).on('error', reject).pipe(req);
    else req.end(body.text);
  });
}

async function text(res: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of res) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/** Waits for the daemon that replaces `oldPid` after an import (its pid file and /api/health). */
async function waitRestarted(client: DaemonClient, pidFile: string, oldPid: number, timeoutMs = 30_000): Promise<number | undefined> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const pid = readPidFile(pidFile)?.pid;
    if (pid && pid !== oldPid && (await client.request('GET', '/api/health', undefined, 1_000).then(() => true, () => false))) return pid;
    await new Promise((r) => setTimeout(r, 100));
  }
  return undefined;
}

const mb = (n: number) => `${(n / 1024 / 1024).toFixed(1)} MB`;

export function register(program: Command, ctx: CommandContext): void {
  const { io } = ctx;
  const backup = program
    .command('backup')
    .description('database backups (state folder backups/), and export/import to move router to another machine');

  examples(withCommon(backup.command('create')), ['router backup create', 'router backup create --json'])
    .description('back up the database now (online: the daemon keeps serving)')
    .option('--json', 'print the backup as JSON')
    .action(
      ctx.run(async (opts) => {
        const rec = await ctx.client(opts).request<BackupRecord>('POST', '/api/db-backups', undefined, 600_000);
        ctx.emit(opts, rec, () => `backup ${rec.id} created (${mb(rec.size)})`);
        return 0;
      }),
    );

  examples(withCommon(backup.command('list')), ['router backup list', 'router backup list --json'])
    .description('list backups, newest first (manual, daily, pre-migration, pre-import)')
    .option('--json', 'print JSON (an array of backups)')
    .action(
      ctx.run(async (opts) => {
        const { backups } = await ctx.client(opts).request<{ backups: BackupRecord[] }>('GET', '/api/db-backups');
        ctx.emit(opts, backups, () =>
          backups.length === 0 ? 'no backups yet; make one with `router backup create`' : table(['ID', 'CREATED', 'SIZE', 'REASON'], backups.map((b) => [b.id, b.createdAt, mb(b.size), b.reason]), [2], { flex: [3] }),
        );
        return 0;
      }),
    );

  examples(withCommon(backup.command('export <file>')), ['router backup export router.db', 'ROUTER_BACKUP_PASSPHRASE=... router backup export router.db --with-secrets'])
    .description('download a consistent copy of the database into FILE (credentials stay encrypted; --with-secrets adds the key, sealed with a passphrase)')
    .option('--with-secrets', 'include the secret key, protected by a passphrase ($ROUTER_BACKUP_PASSPHRASE or asked), so credentials work on the new machine')
    .action(
      ctx.run(async (opts, file: string) => {
        const client = ctx.client(opts);
        let res: IncomingMessage;
        if (opts.withSecrets) {
          const body = JSON.stringify({ passphrase: await passphrase(true) });
          res = await exchange(client, 'POST', '/api/db-backups/export', { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) }, { text: body });
        } else res = await exchange(client, 'GET', '/api/db-backups/export', {});
        if ((res.statusCode ?? 0) !== 200) throw replyError(res.statusCode ?? 0, await text(res), 'GET', '/api/db-backups/export');
        // Written beside the target and renamed: an interrupted download never leaves a half file under FILE.
        const partial = `${file}.partial`;
        try {
          await pipeline(res, createWriteStream(partial, { mode: 0o600 }));
          renameSync(partial, file);
        } catch (err) {
          try {
            unlinkSync(partial);
          } catch {
            // nothing written
          }
          throw new CliError(`cannot write ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
        }
        io.out(`exported the database to ${file} (${mb(statSync(file).size)})${opts.withSecrets ? ', with the secret key sealed by your passphrase' : '; credentials need re-entry on another machine'}`);
        return 0;
      }),
    );

  examples(withCommon(backup.command('import <file>')), ['router backup import router.db', 'router backup import router.db --with-secrets'])
    .description('replace the database with FILE (an export or a backup): validated, a safety backup first, then the daemon restarts')
    .option('--with-secrets', 'the file carries the secret key: give its passphrase ($ROUTER_BACKUP_PASSPHRASE or asked)')
    .option('--json', 'print the import report as JSON')
    .action(
      ctx.run(async (opts, file: string) => {
        let size: number;
        try {
          size = statSync(file).size;
        } catch (err) {
          throw new CliError(`cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`, 2);
        }
        const target = resolveTarget(opts);
        const client = ctx.client(opts);
        const headers: Record<string, string> = { 'content-type': 'application/octet-stream', 'content-length': String(size) };
        if (opts.withSecrets) headers[BACKUP_PASSPHRASE_HEADER] = encodeURIComponent(await passphrase(false));
        const oldPid = readPidFile(target.paths.pid)?.pid ?? 0;
        const res = await exchange(client, 'POST', '/api/db-backups/import', headers, { file });
        const body = await text(res);
        if ((res.statusCode ?? 0) !== 200) throw replyError(res.statusCode ?? 0, body, 'POST', '/api/db-backups/import');
        const reply = JSON.parse(body) as ImportReply;
        const pid = await waitRestarted(client, target.paths.pid, oldPid);
        ctx.emit(opts, { ...reply, pid: pid ?? null }, () => {
          const s = reply.secrets;
          const lines = [
            `imported ${file}; the replaced database is backup ${reply.safetyBackup.id}`,
            `secrets: ${s.kept + s.reencrypted} readable${s.needReentry ? `, ${s.needReentry} need re-entry (connections are inactive with test status needs_credentials)` : ''}`,
            pid ? `router restarted (pid ${pid})` : 'router is restarting; check `router status`',
          ];
          return lines.join('\n');
        });
        return 0;
      }),
    );
}
