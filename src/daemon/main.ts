import type { Server as NodeServer } from 'node:http';
import { serve } from 'h3';
import { onClientError } from './http/client-error.js';
import { listenUrl, resolveHome, resolveListen, statePaths } from '../shared/paths.js';
import { VERSION } from '../shared/version.js';
import { SHUTDOWN_GRACE_MS } from '../shared/wire.js';
import { ensureStateFolder, type StateFolderReport } from '../shared/state-folder.js';
import { bootServices, buildApp, closeServices } from './boot.js';
import { Logger } from './logger.js';
import { claimPidFile, releasePidFile, updatePidFile } from '../shared/pidfile.js';
import type { Services } from './services.js';
import { attachLive } from './live/attach.js';
import { fastPathListener } from './http/fast-path.js';
import { spawnSuccessor } from './system/respawn.js';
import { redisUrlOf } from './hot/index.js';
import { databaseUrlOf } from './cluster/database.js';

export interface DaemonOptions {
  home?: string;
  host?: string;
  port?: string | number;
  foreground?: boolean;
  /** Bound on how long in-flight requests may run after a stop begins. */
  graceMs?: number;
  /** `--redis-url`; else env ROUTER_REDIS_URL; else none (one machine). */
  redisUrl?: string;
  /** `--database-url`; else env ROUTER_DATABASE_URL; else none (the state folder's SQLite file). */
  databaseUrl?: string;
}

/** What happened when the daemon tried to start. */
export type StartOutcome =
  | { kind: 'started'; url: string; pid: number; stopped: Promise<void> }
  | { kind: 'already-running'; url: string; pid: number }
  | { kind: 'failed'; message: string };

function listen(app: ReturnType<typeof buildApp>, services: Services, host: string, port: number): Promise<NodeServer> {
  const server = serve(app, { hostname: host, port, manual: true, silent: true, gracefulShutdown: false });
  // The hot proxy routes skip srvx's adaptation and h3's router (http/fast-path.ts); the rest goes to srvx.
  const srvxListener = server.node?.handler;
  const created = server.node?.server as NodeServer | undefined;
  if (srvxListener && created) {
    created.removeListener('request', srvxListener);
    created.on('request', fastPathListener(app, services, srvxListener, server.waitUntil));
  }
  return new Promise((resolve, reject) => {
    const onError = (err: NodeJS.ErrnoException) =>
      reject(
        new Error(
          err.code === 'EADDRINUSE'
            ? `port ${port} on ${host} is already in use`
            : err.code === 'EADDRNOTAVAIL'
              ? `address ${host} is not available on this machine`
              : `cannot listen on ${host}:${port}: ${err.code ?? err.message}`,
        ),
      );
    const started = server.serve();
    const node = server.node?.server as NodeServer | undefined;
    if (!node) return reject(new Error('the HTTP server did not start'));
    node.on('clientError', onClientError);
    node.once('error', onError);
    node.once('listening', () => {
      node.off('error', onError);
      resolve(node);
    });
    void Promise.resolve(started).catch(onError);
  });
}

/** Longest wait at shutdown for the last usage rows to be stored. */
const USAGE_FLUSH_MS = 3_000;

/** Stops accepting, lets in-flight requests finish within `graceMs`, then closes the database. */
async function shutdown(node: NodeServer, services: Services, graceMs: number): Promise<void> {
  // Upgraded (live WebSocket) sockets are not HTTP connections: close() would wait for them forever.
  services.live.close();
  services.responsesSocket.close();
  // Open MCP SSE streams are requests that never end by themselves.
  services.mcp.close();
  const closed = new Promise<void>((resolve) => node.close(() => resolve()));
  // Batch lines in flight finish and are recorded while the HTTP requests drain: a line that completed
  // upstream must not be sent again after the restart.
  const batches = services.batches.drain(graceMs);
  node.closeIdleConnections();
  // close() drops only the connections idle at that moment: one whose in-flight request finishes later
  // would stay open on keep-alive until the client let go of it, holding the stop for seconds. Sweep.
  const sweep = setInterval(() => node.closeIdleConnections(), 50);
  const timer = setTimeout(() => node.closeAllConnections(), graceMs);
  await Promise.all([closed, batches]);
  clearInterval(sweep);
  clearTimeout(timer);
  // Usage rows go out while the database is open (cluster mode: to the shared database, which may take a
  // round trip; what has not arrived within the bound is queued on disk by close()).
  await Promise.race([services.usage.flush(), new Promise((resolve) => setTimeout(resolve, USAGE_FLUSH_MS).unref())]);
  closeServices(services);
}

/** Runs the daemon in this process. Resolves once it is listening (or could not start). */
export async function runDaemon(opts: DaemonOptions): Promise<StartOutcome> {
  const home = resolveHome(opts.home);
  const { host, port } = resolveListen({ host: opts.host, port: opts.port });
  const paths = statePaths(home);
  const log = new Logger({ file: paths.log, echo: opts.foreground });
  const pidContent = { pid: process.pid, host, port, url: listenUrl(host, port), startedAt: new Date().toISOString(), version: VERSION };

  let claim;
  let folder: StateFolderReport;
  try {
    // Everything the daemon writes (database and its -wal/-shm, logs, backups, keys) is owner-only.
    process.umask(0o077);
    folder = ensureStateFolder(home);
    claim = claimPidFile(paths.pid, pidContent);
  } catch (err) {
    return { kind: 'failed', message: `cannot use the state folder ${home}: ${(err as Error).message}` };
  }
  if (!claim.ok) return { kind: 'already-running', url: claim.holder.url, pid: claim.holder.pid };
  for (const path of folder.tightened) log.warn('state file was readable by others; now owner-only', { path });

  let services: Services;
  let node: NodeServer;
  let stopping: Promise<void> | undefined;
  let resolveStopped!: () => void;
  const stopped = new Promise<void>((r) => (resolveStopped = r));
  let restartPlan: { reason: string; beforeStart?: () => void } | undefined;
  const stop = (reason: string) => {
    if (stopping) return;
    log.info('stopping', { reason });
    stopping = shutdown(node, services, opts.graceMs ?? SHUTDOWN_GRACE_MS)
      .catch((err) => log.error('error during shutdown', { error: String(err) }))
      .then(() => {
        releasePidFile(paths.pid, process.pid);
        log.info('stopped');
        if (restartPlan) return restartAfterStop(restartPlan);
      })
      .catch((err) => log.error('restart failed', { error: String(err) }))
      .finally(() => {
        log.flushSync();
        resolveStopped();
      });
  };
  /** The second half of a restart: the database is closed and the pid file released; start the successor. */
  const restartAfterStop = async (plan: { reason: string; beforeStart?: () => void }) => {
    try {
      plan.beforeStart?.();
    } catch (err) {
      log.error('restart: the step before the new start failed; starting with the database as it was', { error: (err as Error).message });
    }
    log.flushSync();
    const outcome = await spawnSuccessor({ home, host, port: services.listen.port, foreground: opts.foreground === true, log });
    if (outcome.exited) await outcome.exited;
  };
  /** Restart: stop gracefully (after the current reply is sent), then start a new daemon process. */
  const restart = (reason: string, beforeStart?: () => void) => {
    if (stopping || restartPlan) return;
    restartPlan = { reason, beforeStart };
    setTimeout(() => stop(`restart: ${reason}`), 20);
  };
  try {
    const redisUrl = redisUrlOf(opts.redisUrl);
    // A restart's successor process inherits the environment, not this process's flags.
    if (redisUrl) process.env.ROUTER_REDIS_URL = redisUrl;
    const databaseUrl = databaseUrlOf(opts.databaseUrl);
    if (databaseUrl) process.env.ROUTER_DATABASE_URL = databaseUrl;
    services = await bootServices({ home, host, port, log, requestShutdown: stop, requestRestart: restart, redisUrl, databaseUrl });
  } catch (err) {
    releasePidFile(paths.pid, process.pid);
    log.error('start failed', { error: (err as Error).message });
    log.flushSync();
    return { kind: 'failed', message: (err as Error).message };
  }
  try {
    const app = buildApp(services);
    node = await listen(app, services, host, port);
    // WebSocket upgrades (GET /api/live) and the in-flight tracker of proxied requests.
    attachLive(node, app, services);
  } catch (err) {
    closeServices(services);
    releasePidFile(paths.pid, process.pid);
    log.error('start failed', { error: (err as Error).message });
    log.flushSync();
    return { kind: 'failed', message: (err as Error).message };
  }
  const address = node.address();
  const actualPort = typeof address === 'object' && address ? address.port : port;
  const url = listenUrl(host, actualPort);
  services.listen = { host, port: actualPort, url };
  updatePidFile(paths.pid, { ...pidContent, port: actualPort, url });
  if (services.settings.get().allowPrivateWebhookDestinations) {
    log.warn('allowPrivateWebhookDestinations is on: webhooks may target private and loopback addresses');
  }
  // Cluster mode: this node joins the registry now that its address is known (heartbeat every 5 s).
  await services.clusterNodes?.start();
  services.tokenRefresher.start();
  services.backups.start();
  const flushTimer = setInterval(() => {
    services.keys.flush().catch((err: unknown) => log.warn('key last-use flush failed; retried next time', { error: err instanceof Error ? err.message : String(err) }));
  }, 30_000);
  flushTimer.unref();
  stopped.then(() => clearInterval(flushTimer));
  for (const sig of ['SIGTERM', 'SIGINT', 'SIGHUP'] as const) process.once(sig, () => stop(sig));
  log.info('listening', { url, pid: process.pid, version: VERSION, home });
  return { kind: 'started', url, pid: process.pid, stopped };
}

