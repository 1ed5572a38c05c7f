import { homedir } from 'node:os';
import { join, resolve } from 'node:path';

export const DEFAULT_HOST = '127.0.0.1';
export const DEFAULT_PORT = 20128;

/** Where one router installation keeps its state: `--home` > `ROUTER_HOME` > `~/.router`. */
export function resolveHome(flag?: string, env: NodeJS.ProcessEnv = process.env): string {
  return resolve(flag || env.ROUTER_HOME || join(homedir(), '.router'));
}

/** The files of the state folder. One place names them so CLI and daemon cannot disagree. */
export function statePaths(home: string) {
  return {
    home,
    db: join(home, 'router.db'),
    pid: join(home, 'router.pid'),
    log: join(home, 'router.log'),
    startLock: join(home, 'start.lock'),
    cliSalt: join(home, 'cli-token.salt'),
    /** The address the daemon was last started at with --host/--port (or ROUTER_HOST/ROUTER_PORT): `router start` and `restart` reuse it. */
    address: join(home, 'address.json'),
    secretKey: join(home, 'secret.key'),
    /** Database backups (folder 0700, files 0600): `router backup`, daily and before migrations. */
    backups: join(home, 'backups'),
    /** The model catalog fetched by `router catalog update` (docs/catalog.md); absent: the shipped one. */
    catalog: join(home, 'catalog.json'),
  };
}
export type StatePaths = ReturnType<typeof statePaths>;

/** Listener address: flag > env > default. */
export function resolveListen(
  flags: { host?: string; port?: string | number },
  env: NodeJS.ProcessEnv = process.env,
): { host: string; port: number } {
  const host = flags.host || env.ROUTER_HOST || DEFAULT_HOST;
  const rawPort = flags.port ?? env.ROUTER_PORT ?? DEFAULT_PORT;
  const port = Number(rawPort);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`invalid port: ${rawPort}`);
  return { host, port };
}

/** The URL clients use for a listener; wildcard binds are reached through loopback. */
export function listenUrl(host: string, port: number): string {
  const h = host === '0.0.0.0' ? '127.0.0.1' : host === '::' ? '[::1]' : host.includes(':') ? `[${host}]` : host;
  return `http://${h}:${port}`;
}
