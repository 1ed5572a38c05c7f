import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import type { Command } from 'commander';
import type { OAuthAuthorizeReply, OAuthConnectionReply, OAuthConnectionView, OAuthDeviceCodeReply, OAuthPollReply } from '../../shared/oauth.js';
import type { DaemonClient } from '../client.js';
import { examples, withCommon, type CommandContext } from '../common.js';
import { stamp } from '../format.js';
import { CliError, type Io, table } from '../io.js';

/** Providers whose login is a device code (the others open a browser). */
const DEVICE = new Set(['github-copilot', 'qwen-code']);

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Opens a URL in the desktop browser when there is one; a failure only means the user opens it. */
function openBrowser(url: string): void {
  const cmd = process.platform === 'darwin' ? 'open' : process.platform === 'win32' ? 'explorer' : 'xdg-open';
  try {
    const child = spawn(cmd, [url], { stdio: 'ignore', detached: true });
    child.on('error', () => {});
    child.unref();
  } catch {
    // no browser: the URL is printed
  }
}

/** Polls until the login ends or `deadline`; a spinner on stderr in a terminal. */
async function waitFor(io: Io, deadline: number, poll: () => Promise<OAuthPollReply>, everyMs: () => number): Promise<OAuthConnectionView> {
  const frames = '|/-\\';
  let i = 0;
  for (;;) {
    if (Date.now() > deadline) throw new CliError('the login timed out; run `router login` again.');
    const r = await poll();
    if (r.status === 'complete' && r.connection) return r.connection;
    if (r.status !== 'pending' && r.status !== 'slow_down') throw new CliError(r.error ?? `the login ended: ${r.status}`);
    if (io.interactive) io.err(`\r${frames[i++ % 4]} waiting for the login...`);
    await sleep(everyMs());
  }
}

async function login(client: DaemonClient, io: Io, provider: string, timeoutS: number, browser: boolean): Promise<OAuthConnectionView> {
  const deadline = Date.now() + timeoutS * 1000;
  const base = `/api/oauth/${encodeURIComponent(provider)}`;
  if (DEVICE.has(provider)) {
    const dc = await client.request<OAuthDeviceCodeReply>('GET', `${base}/device-code`);
    io.out(`Open ${dc.verification_uri_complete ?? dc.verification_uri} and enter the code ${dc.user_code}`);
    let interval = dc.interval;
    return waitFor(io, Math.min(deadline, Date.now() + dc.expires_in * 1000), async () => {
      const r = await client.request<OAuthPollReply>('POST', `${base}/poll`, { state: dc.state });
      if (r.interval !== undefined) interval = r.interval;
      return r;
    }, () => Math.max(1, interval) * 1000);
  }
  const start = await client.request<OAuthAuthorizeReply>('GET', `${base}/start-callback-server`);
  io.out(`Log in in your browser: ${start.authUrl}`);
  if (browser) openBrowser(start.authUrl);
  return waitFor(io, deadline, () => client.request<OAuthPollReply>('POST', `${base}/poll-callback`, { state: start.state }), () => 1000);
}

function readTokens(file: string | true): Record<string, unknown> {
  let text: string;
  try {
    text = file === true ? readFileSync(0, 'utf8') : readFileSync(file, 'utf8');
  } catch (err) {
    throw new CliError(`cannot read ${file === true ? 'stdin' : file}: ${(err as Error).message}`, 2);
  }
  try {
    const doc = JSON.parse(text) as unknown;
    if (doc && typeof doc === 'object' && !Array.isArray(doc)) return doc as Record<string, unknown>;
  } catch {
    // reported below
  }
  throw new CliError('the token file must be a JSON object: {"accessToken": "...", "refreshToken"?: "...", "expiresAt"?: ...}', 2);
}

export function register(program: Command, ctx: CommandContext): void {
  const { io } = ctx;
  examples(withCommon(program.command('login <provider>')), [
    'router login codex                 # opens the browser, waits for the callback',
    'router login github-copilot        # prints a device code and waits',
    'router login windsurf --import token.json',
  ])
    .description('log in to a subscription provider (claude-code, codex, gemini-cli, antigravity, github-copilot, qwen-code) or import its token')
    .option('--import [file]', 'import tokens from a JSON file ({accessToken, refreshToken?, expiresAt?...}; stdin without a file)')
    .option('--timeout <seconds>', 'give up after this long', '300')
    .option('--no-browser', 'print the login URL without opening a browser')
    .option('--json', 'print JSON')
    .action(
      ctx.run(async (opts: { import?: string | true; timeout: string; browser: boolean; json?: boolean }, provider: string) => {
        const client = ctx.client(opts as never);
        if (opts.import !== undefined) {
          const reply = await client.request<OAuthConnectionReply>('POST', `/api/oauth/${encodeURIComponent(provider)}/import-token`, readTokens(opts.import));
          ctx.emit(opts, reply, () => `${reply.created ? 'imported' : 'updated'} ${reply.connection.provider} connection '${reply.connection.name}' (${reply.connection.id})`);
          return 0;
        }
        const timeout = Number(opts.timeout);
        if (!Number.isFinite(timeout) || timeout <= 0) throw new CliError('--timeout must be a number of seconds.', 2);
        const connection = await login(client, io, provider, timeout, opts.browser);
        if (io.interactive) io.err('\r');
        ctx.emit(opts, { connection }, () => `logged in: ${connection.provider} connection '${connection.name}' (${connection.id})`);
        return 0;
      }),
    );

  examples(withCommon(program.command('accounts')), ['router accounts', 'router accounts --json'])
    .description('OAuth connections by provider, with token expiry and last refresh')
    .option('--json', 'print JSON')
    .action(
      ctx.run(async (opts: { json?: boolean }) => {
        const client = ctx.client(opts as never);
        const all = (await client.request<{ connections: Array<OAuthConnectionView & { authKind: string }> }>('GET', '/api/providers')).connections;
        const accounts = all.filter((c) => c.authKind === 'oauth').sort((a, b) => a.provider.localeCompare(b.provider));
        ctx.emit(opts, { accounts }, () =>
          accounts.length === 0
            ? 'no OAuth accounts; `router login <provider>` adds one'
            : table(
                ['PROVIDER', 'NAME', 'ID', 'EXPIRES', 'LAST REFRESH', 'STATUS'],
                accounts.map((c) => {
                  const refreshed = c.providerSpecificData.lastRefreshedAt;
                  return [
                    c.provider,
                    c.name,
                    c.id,
                    c.expiresAt ? stamp(c.expiresAt) : '-',
                    typeof refreshed === 'string' ? stamp(refreshed) : '-',
                    c.isActive ? 'active' : (c.testStatus ?? 'inactive'),
                  ];
                }),
              ),
        );
        return 0;
      }),
    );
}
