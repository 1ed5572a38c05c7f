import { readFileSync, writeFileSync } from 'node:fs';
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

/** The address remembered in the state folder (`address.json`): each field set by the last start that named it. */
export interface RememberedAddress {
  host?: string;
  port?: number;
}

/** Reads the remembered address; a missing or broken file (or a wrong-typed field) remembers nothing. */
export function readRememberedAddress(paths: StatePaths): RememberedAddress {
  let raw: Record<string, unknown> = {};
  try {
    const parsed = JSON.parse(readFileSync(paths.address, 'utf8')) as unknown;
    if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) raw = parsed as Record<string, unknown>;
  } catch {
    return {};
  }
  const out: RememberedAddress = {};
  if (typeof raw.host === 'string' && raw.host) out.host = raw.host;
  if (Number.isInteger(raw.port) && (raw.port as number) >= 0 && (raw.port as number) <= 65535) out.port = raw.port as number;
  return out;
}

/**
 * After a start: remembers the host and the port that were named for it (flag or ROUTER_HOST/ROUTER_PORT),
 * so a later `router start` or `router restart` without them comes back at the same address. A field not
 * named keeps what was remembered before.
 */
export function rememberAddress(opts: CommonOptions, target: Target, env: NodeJS.ProcessEnv = process.env): void {
  const hostNamed = opts.host !== undefined || Boolean(env.ROUTER_HOST);
  const portNamed = opts.port !== undefined || Boolean(env.ROUTER_PORT);
  if (!hostNamed && !portNamed) return;
  const before = readRememberedAddress(target.paths);
  const next: RememberedAddress = { ...before, ...(hostNamed ? { host: target.host } : {}), ...(portNamed ? { port: target.port } : {}) };
  if (next.host === before.host && next.port === before.port) return;
  writeFileSync(target.paths.address, `${JSON.stringify(next)}\n`, { mode: 0o600 });
}

/**
 * Resolves the daemon to talk to: explicit --host/--port win; otherwise the running daemon recorded in the
 * state folder's pid file; otherwise ROUTER_HOST/ROUTER_PORT, then the address the daemon was last started
 * at with them or with the flags (`address.json` in the state folder), then the CLI config's host and port,
 * then 127.0.0.1:20128. The state folder: --home > ROUTER_HOME > the CLI config's home > ~/.router.
 */
export function resolveTarget(opts: CommonOptions, env: NodeJS.ProcessEnv = process.env): Target {
  const config = readCliConfig(env);
  const paths = statePaths(resolveHome(opts.home || env.ROUTER_HOME || config.home, env));
  const pid = readPidFile(paths.pid);
  const alive = pid && isAlive(pid.pid) ? pid : undefined;
  const explicit = opts.host !== undefined || opts.port !== undefined;
  const remembered = readRememberedAddress(paths);
  const fallbackPort = remembered.port ?? config.port;
  const listen = resolveListen(
    { host: opts.host, port: opts.port },
    {
      ...env,
      ROUTER_HOST: env.ROUTER_HOST || remembered.host || config.host,
      ROUTER_PORT: env.ROUTER_PORT || (fallbackPort === undefined ? undefined : String(fallbackPort)),
    },
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
