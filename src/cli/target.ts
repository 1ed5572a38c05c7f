import { deriveCliToken } from '../shared/cli-token.js';
import { listenUrl, resolveHome, resolveListen, statePaths, type StatePaths } from '../shared/paths.js';
import { isAlive, readPidFile } from '../shared/pidfile.js';
import type { PidFile } from '../shared/wire.js';
import { readCliConfig } from './config.js';

/** Options every daemon-facing command accepts, anywhere on the line. */
export interface CommonOptions {
  home?: string;
  host?: string;
  port?: string;
  debug?: boolean;
}

/** Where the daemon of this state folder is (or would be), and how to authenticate to it. */
export interface Target {
  paths: StatePaths;
  url: string;
  host: string;
  port: number;
  /** The running daemon's pid file, when its process is alive. */
  running?: PidFile;
  /** A pid file whose process is gone. */
  stale?: PidFile;
  cliToken?: string;
}

/**
 * Resolves the daemon to talk to: explicit --host/--port win; otherwise the running daemon recorded in the
 * state folder's pid file; otherwise the defaults (ROUTER_HOST/ROUTER_PORT, the CLI config's host and
 * port, 127.0.0.1:20128). The state folder: --home > ROUTER_HOME > the CLI config's home > ~/.router.
 */
export function resolveTarget(opts: CommonOptions, env: NodeJS.ProcessEnv = process.env): Target {
  const config = readCliConfig(env);
  const paths = statePaths(resolveHome(opts.home || env.ROUTER_HOME || config.home, env));
  const pid = readPidFile(paths.pid);
  const alive = pid && isAlive(pid.pid) ? pid : undefined;
  const explicit = opts.host !== undefined || opts.port !== undefined;
  const listen = resolveListen(
    { host: opts.host, port: opts.port },
    { ...env, ROUTER_HOST: env.ROUTER_HOST || config.host, ROUTER_PORT: env.ROUTER_PORT || (config.port === undefined ? undefined : String(config.port)) },
  );
  const useRecorded = alive && !explicit;
  const host = useRecorded ? alive.host : listen.host;
  const port = useRecorded ? alive.port : listen.port;
  return {
    paths,
    host,
    port,
    url: useRecorded ? alive.url : listenUrl(host, port),
    running: alive,
    stale: pid && !alive ? pid : undefined,
    cliToken: deriveCliToken(paths.cliSalt, false),
  };
}
