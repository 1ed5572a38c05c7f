/**
 * The live commands (`logs -f`, `usage --live`, `inspect`, `dashboard`), loaded only when one of them
 * runs. On a terminal they start a TUI (Ink and React are imported here, never by plain commands);
 * without one they print plain lines (or JSON lines) until interrupted.
 */
import { query, type DaemonClient } from '../client.js';
import { readCliConfig } from '../config.js';
import { clock, int, tokens, costTotal } from '../format.js';
import { table } from '../io.js';
import { entryKey, openLive, SeenSet, type LiveFeed } from '../live.js';
import type { CommandContext } from '../common.js';
import type { ComboRecord, LiveRequest, LogEntry, RequestEntry } from '../types.js';
import type { StatusReply } from '../../shared/wire.js';
import { formatLogLine, matchesFilter, type RequestFilter } from './logs.js';
import type { ViewName } from '../tui/app.js';

/** Starts a TUI view (honouring the `color never` preference and NO_COLOR before Ink loads). */
async function tui(client: DaemonClient, view: ViewName, filter?: RequestFilter): Promise<number> {
  if (readCliConfig().color === 'never' || process.env.NO_COLOR) process.env.FORCE_COLOR = '0';
  // Fail with the usual one-line error (daemon not running, not authorized) before taking the screen.
  await client.request('GET', '/api/system/status', undefined, 5_000);
  // Ink renders only the final frame when it thinks it runs in CI (CI or CONTINUOUS_INTEGRATION set, read
  // once at import). A TUI is only started on a real terminal, so a CI variable inherited by a person's
  // shell must not blank the screen: it is cleared for this process before Ink loads.
  delete process.env.CI;
  delete process.env.CONTINUOUS_INTEGRATION;
  const { runTui } = await import('../tui/run.js');
  return runTui(client, view, filter);
}

/** Resolves on Ctrl-C, SIGTERM or SIGHUP; a closed pipe (`| head`) ends the process quietly. */
function untilInterrupted(): Promise<void> {
  process.stdout.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code === 'EPIPE') process.exit(0);
  });
  return new Promise((resolve) => {
    const done = () => {
      for (const s of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.off(s, done);
      resolve();
    };
    for (const s of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(s, done);
  });
}

/** Opens the live channel and waits (bounded) until it is open, so nothing recorded after "now" is missed. */
async function openFeed(ctx: CommandContext, client: DaemonClient, onRequest: (m: LiveRequest) => void, onStatus?: (m: unknown) => void): Promise<LiveFeed> {
  let opened!: () => void;
  const open = new Promise<void>((r) => (opened = r));
  const feed = await openLive(client, {
    onMessage: (m) => (m.type === 'request' ? onRequest(m) : onStatus?.(m)),
    onState: (s, detail, reconnected) => {
      if (s === 'open') opened();
      if (reconnected) ctx.io.err('router: reconnected; requests recorded meanwhile are read from the request log');
      else if (s === 'reconnecting' && detail) ctx.io.err(`router: ${detail}`);
    },
  });
  await Promise.race([open, new Promise((r) => setTimeout(r, 5_000).unref())]);
  return feed;
}

const plainEntry = (e: RequestEntry) => {
  const { type: _type, ...rest } = e as RequestEntry & { type?: string };
  return rest;
};

/**
 * The key id live entries are matched against for `--key` (an id or a name). The daemon's request log
 * resolves the same way and refuses a name no key has (404), so a typo is an error, not an empty feed.
 */
async function keyIdOf(client: DaemonClient, ref: string): Promise<string> {
  const { findKey } = await import('./keys.js');
  try {
    return (await findKey(client, ref)).id;
  } catch {
    // Not a current key: a deleted key's id still names its requests; anything else the daemon refuses.
    await client.request('GET', `/api/logs${query({ key: ref, limit: 1 })}`);
    return ref;
  }
}

/** `router logs -f`. */
export async function followLogs(ctx: CommandContext, opts: any, q: string): Promise<number> {
  const client = ctx.client(opts);
  const key = opts.key === undefined ? undefined : await keyIdOf(client, opts.key);
  const filter: RequestFilter = { provider: opts.provider, model: opts.model, status: opts.status, key };
  if (ctx.io.interactive && !opts.json) return tui(client, 'logs', filter);
  const interrupted = untilInterrupted();
  // Every request is printed once: the history, live messages and a reconnect's backfill may overlap.
  const printed = new SeenSet();
  const print = (e: RequestEntry) => {
    if (printed.add(entryKey(e))) ctx.io.out(opts.json ? JSON.stringify(plainEntry(e)) : formatLogLine(e));
  };
  // Live messages wait until the history is printed, then follow.
  let backlog: LiveRequest[] | null = [];
  const feed = await openFeed(ctx, client, (m) => {
    if (!matchesFilter(m, filter)) return;
    if (backlog) backlog.push(m);
    else print(m);
  });
  try {
    const { logs } = await client.request<{ logs: LogEntry[] }>('GET', `/api/logs${q}`);
    for (const e of [...logs].reverse()) print(e);
    const pending = backlog;
    backlog = null;
    for (const m of pending) print(m);
  } catch (err) {
    feed.close();
    throw err;
  }
  await interrupted;
  feed.close();
  return 0;
}

/** `router usage --live`. Without a terminal: one line (or JSON object) per interval with what arrived. */
export async function usageLive(ctx: CommandContext, opts: any): Promise<number> {
  const client = ctx.client(opts);
  if (ctx.io.interactive && !opts.json) return tui(client, 'usage');
  const interrupted = untilInterrupted();
  const seconds = Number(opts.interval ?? 10);
  let win = { requests: 0, errors: 0, tokens: 0, costUsd: 0, unpricedRequests: 0 };
  const total = { requests: 0, errors: 0, tokens: 0, costUsd: 0, unpricedRequests: 0 };
  await client.request('GET', '/api/system/status', undefined, 5_000);
  const feed = await openFeed(ctx, client, (m) => {
    for (const t of [win, total]) {
      t.requests++;
      t.errors += m.status >= 400 ? 1 : 0;
      t.tokens += m.tokensIn + m.tokensOut;
      if (m.costUsd === null) t.unpricedRequests++;
      else t.costUsd += m.costUsd;
    }
  });
  const timer = setInterval(() => {
    const time = new Date().toISOString();
    if (opts.json) ctx.io.out(JSON.stringify({ time, intervalSeconds: seconds, ...win, total }));
    else ctx.io.out(`${clock(time)}  ${int(win.requests)} req  ${int(win.errors)} err  ${tokens(win.tokens)} tok  ${costTotal(win.costUsd, win.unpricedRequests)}   (since start: ${int(total.requests)} req, ${costTotal(total.costUsd, total.unpricedRequests)})`);
    win = { requests: 0, errors: 0, tokens: 0, costUsd: 0, unpricedRequests: 0 };
  }, seconds * 1000);
  await interrupted;
  clearInterval(timer);
  feed.close();
  return 0;
}

/** `router inspect`. Without a terminal: each request as a block of fields (or a JSON line). */
export async function inspect(ctx: CommandContext, opts: any): Promise<number> {
  const client = ctx.client(opts);
  if (ctx.io.interactive && !opts.json) return tui(client, 'inspect');
  const interrupted = untilInterrupted();
  await client.request('GET', '/api/system/status', undefined, 5_000);
  const { metadataLines } = await import('../tui/inspect-text.js');
  const feed = await openFeed(ctx, client, (m) => ctx.io.out(opts.json ? JSON.stringify(plainEntry(m)) : `${metadataLines(m).join('\n')}\n`));
  await interrupted;
  feed.close();
  return 0;
}

/** `router dashboard`. Without a terminal: one snapshot of the same information, then exit. */
export async function dashboard(ctx: CommandContext, opts: any): Promise<number> {
  const client = ctx.client(opts);
  if (ctx.io.interactive && !opts.json) return tui(client, 'dashboard');
  const [status, { connections }, { combos }, resilience] = await Promise.all([
    client.request<StatusReply>('GET', '/api/system/status'),
    client.call('GET /api/providers'),
    client.request<{ combos: ComboRecord[] }>('GET', '/api/combos'),
    client.call('GET /api/resilience'),
  ]);
  const { providerLines } = await import('../tui/dashboard-text.js');
  const providers = providerLines(connections, resilience, new Map(), Date.now());
  if (opts.json) {
    ctx.io.out(JSON.stringify({ status, providers, combos, resilience }));
    return 0;
  }
  ctx.io.out(
    [
      `router ${status.version} at ${status.url} (pid ${status.pid})`,
      '',
      providers.length
        ? table(['PROVIDER', 'CONNECTIONS', 'CIRCUIT', 'COOLDOWNS'], providers.map((p) => [p.provider, `${p.active}/${p.total}`, p.circuit, String(p.cooldowns)]), [], { flex: [2] })
        : 'no providers yet',
      '',
      combos.length ? table(['COMBO', 'STRATEGY', 'MODELS'], combos.map((c) => [c.name, c.strategy, c.models.map((m) => m.model).join(', ')]), [], { flex: [2] }) : 'no combos',
    ].join('\n'),
  );
  return 0;
}
