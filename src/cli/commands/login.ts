import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import type { Command } from 'commander';
import type { OAuthAuthorizeReply, OAuthCancelReply, OAuthConnectionReply, OAuthConnectionView, OAuthDeviceCodeReply, OAuthPollReply } from '../../shared/oauth.js';
import type { DaemonClient } from '../client.js';
import { examples, withCommon, type CommandContext } from '../common.js';
import { CliError, type Io } from '../io.js';

/** Providers whose login is a device code (the others open a browser). */
const DEVICE = new Set(['github-copilot', 'qwen-code']);

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * The command that opens a URL: `BROWSER` when set (the convention xdg-utils and Python's webbrowser
 * follow: a `:`-separated list whose first entry is used, `%s` replaced by the URL or else the URL appended;
 * words split on spaces, no shell), else the desktop's opener.
 */
export function browserCommand(url: string, env: NodeJS.ProcessEnv = process.env, platform = process.platform): [string, string[]] {
  const first = env.BROWSER?.split(platform === 'win32' ? ';' : ':').find((c) => c.trim());
  if (first) {
    const words = first.trim().split(/\s+/);
    const args = words.slice(1);
    return [words[0]!, args.some((a) => a.includes('%s')) ? args.map((a) => a.replaceAll('%s', url)) : [...args, url]];
  }
  return [platform === 'darwin' ? 'open' : platform === 'win32' ? 'explorer' : 'xdg-open', [url]];
}

/** Opens a URL in the browser when there is one; a failure only means the user opens it. */
function openBrowser(url: string): void {
  const [cmd, args] = browserCommand(url);
  try {
    const child = spawn(cmd, args, { stdio: 'ignore', detached: true });
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

/** What `router login` was asked for. */
interface LoginOptions {
  timeoutS: number;
  browser: boolean;
  callbackPort?: number;
}

/**
 * Runs `wait`; when it fails (the timeout, an interrupt), tells the daemon to abandon the login, which closes
 * its callback listener at once instead of at the login's 5-minute expiry.
 */
async function cancelOnFailure<T>(client: DaemonClient, base: string, state: string, wait: () => Promise<T>): Promise<T> {
  const cancel = () => client.request<OAuthCancelReply>('POST', `${base}/cancel`, { state }).catch(() => undefined);
  const onSignal = () => {
    void cancel().finally(() => process.exit(130));
  };
  process.once('SIGINT', onSignal);
  try {
    return await wait();
  } catch (err) {
    await cancel();
    throw err;
  } finally {
    process.off('SIGINT', onSignal);
  }
}

async function login(client: DaemonClient, io: Io, provider: string, opts: LoginOptions): Promise<OAuthConnectionView> {
  const { timeoutS, browser } = opts;
  const deadline = Date.now() + timeoutS * 1000;
  const base = `/api/oauth/${encodeURIComponent(provider)}`;
  if (DEVICE.has(provider)) {
    const dc = await client.request<OAuthDeviceCodeReply>('GET', `${base}/device-code`);
    io.out(`Open ${dc.verification_uri_complete ?? dc.verification_uri} and enter the code ${dc.user_code}`);
    let interval = dc.interval;
    return cancelOnFailure(client, base, dc.state, () =>
      waitFor(io, Math.min(deadline, Date.now() + dc.expires_in * 1000), async () => {
        const r = await client.request<OAuthPollReply>('POST', `${base}/poll`, { state: dc.state });
        if (r.interval !== undefined) interval = r.interval;
        return r;
      }, () => Math.max(1, interval) * 1000),
    );
  }
  const query = opts.callbackPort ? `?port=${opts.callbackPort}` : '';
  const start = await client.request<OAuthAuthorizeReply>('GET', `${base}/start-callback-server${query}`);
  io.out(`Log in in your browser: ${start.authUrl}`);
  if (browser) openBrowser(start.authUrl);
  return cancelOnFailure(client, base, start.state, () =>
    waitFor(io, deadline, () => client.request<OAuthPollReply>('POST', `${base}/poll-callback`, { state: start.state }), () => 1000).catch((err: unknown) => {
      if (err instanceof CliError && err.message.startsWith('the login timed out')) {
        throw new CliError(`no browser came back to ${start.redirectUri} within ${timeoutS} s; the login was cancelled and its listener closed. Run \`router login ${provider}\` again.`);
      }
      throw err;
    }),
  );
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
    .option('--no-browser', 'print the login URL without opening a browser (else $BROWSER, or the desktop\'s opener)')
    .option('--callback-port <port>', "listen for the browser's redirect on this port instead of the provider's registered one")
    .option('--json', 'print JSON')
    .action(
      ctx.run(async (opts: { import?: string | true; timeout: string; browser: boolean; callbackPort?: string; json?: boolean }, provider: string) => {
        const client = ctx.client(opts as never);
        if (opts.import !== undefined) {
          const reply = await client.request<OAuthConnectionReply>('POST', `/api/oauth/${encodeURIComponent(provider)}/import-token`, readTokens(opts.import));
          ctx.emit(opts, reply, () => `${reply.created ? 'imported' : 'updated'} ${reply.connection.provider} connection '${reply.connection.name}' (${reply.connection.id})`);
          return 0;
        }
        const timeout = Number(opts.timeout);
        if (!Number.isFinite(timeout) || timeout <= 0) throw new CliError('--timeout must be a number of seconds.', 2);
        const callbackPort = opts.callbackPort === undefined ? undefined : Number(opts.callbackPort);
        if (callbackPort !== undefined && !(Number.isInteger(callbackPort) && callbackPort >= 1024 && callbackPort <= 65_535)) {
          throw new CliError('--callback-port must be a port number from 1024 to 65535.', 2);
        }
        const connection = await login(client, io, provider, { timeoutS: timeout, browser: opts.browser, callbackPort });
        if (io.interactive) io.err('\r');
        ctx.emit(opts, { connection }, () => `logged in: ${connection.provider} connection '${connection.name}' (${connection.id})`);
        return 0;
      }),
    );
}
