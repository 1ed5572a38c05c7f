import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { freePort } from './cli.js';

/** Debian's PostgreSQL 15 binaries (the `postgresql` package; `.ci/run` installs it). */
export const PG_BIN = process.env.ROUTER_TEST_PG_BIN ?? '/usr/lib/postgresql/15/bin';

/** Why the PostgreSQL tests cannot run here, or undefined when they can. */
export function postgresUnavailable(): string | undefined {
  if (!existsSync(join(PG_BIN, 'initdb')) || !existsSync(join(PG_BIN, 'postgres'))) {
    return `PostgreSQL 15 binaries not found in ${PG_BIN} (install the Debian package postgresql, or set ROUTER_TEST_PG_BIN)`;
  }
  if (process.getuid?.() === 0 && spawnSync('id', ['-u', 'postgres']).status !== 0) {
    return 'running as root and there is no postgres OS user to run initdb as (initdb refuses root)';
  }
  return undefined;
}

export interface PostgresServer {
  /** postgres://postgres@127.0.0.1:PORT/postgres (trust authentication, loopback only). */
  url: string;
  port: number;
  /** Creates a fresh empty database and returns its URL (one per test keeps tests apart on one server). */
  createDatabase(name?: string): Promise<string>;
  /** Stops the server (fast shutdown) and deletes its folder. */
  stop(): Promise<void>;
  /** Takes the server down abruptly (immediate shutdown: sessions cut, no checkpoint), keeping its data. */
  down(): Promise<void>;
  /** Starts it again after `down()`, on the same port with the same data; resolves once it accepts connections. */
  up(): Promise<void>;
}

let counter = 0;

/** Runs a PostgreSQL binary as the postgres OS user when we are root (initdb and postgres refuse root). */
function asPostgres(bin: string, args: string[]): [string, string[]] {
  const file = join(PG_BIN, bin);
  return process.getuid?.() === 0 ? ['runuser', ['-u', 'postgres', '--', file, ...args]] : [file, args];
}

/**
 * Starts a throwaway PostgreSQL 15 in a temp folder: initdb (trust auth), a free loopback port, the unix
 * socket in the same folder, durability off (fsync, synchronous_commit) since the data dies with the test.
 * Resolves once the server accepts connections.
 */
export async function startPostgres(): Promise<PostgresServer> {
  const why = postgresUnavailable();
  if (why) throw new Error(why);
  const dir = mkdtempSync(join(tmpdir(), 'router-pg-'));
  const data = join(dir, 'data');
  if (process.getuid?.() === 0) {
    const uid = Number(spawnSync('id', ['-u', 'postgres']).stdout.toString().trim());
    const gid = Number(spawnSync('id', ['-g', 'postgres']).stdout.toString().trim());
    chownSync(dir, uid, gid);
  }
  chmodSync(dir, 0o700);
  const [initCmd, initArgs] = asPostgres('initdb', ['-D', data, '-A', 'trust', '-U', 'postgres', '-E', 'UTF8', '--locale=C', '--no-sync']);
  const init = spawnSync(initCmd, initArgs, { encoding: 'utf8' });
  if (init.status !== 0) {
    rmSync(dir, { recursive: true, force: true });
    throw new Error(`initdb failed: ${init.stderr || init.stdout}`);
  }
  const port = await freePort();
  const settings = ['listen_addresses=127.0.0.1', `unix_socket_directories=${dir}`, 'fsync=off', 'synchronous_commit=off', 'full_page_writes=off', 'max_connections=100'];
  const [cmd, args] = asPostgres('postgres', ['-D', data, '-p', String(port), ...settings.flatMap((s) => ['-c', s])]);
  let child!: ChildProcess;
  let stderr = '';
  let exited!: Promise<void>;
  const spawnServer = () => {
    child = spawn(cmd, args, { stdio: ['ignore', 'ignore', 'pipe'] });
    child.stderr?.on('data', (chunk: Buffer) => {
      stderr = (stderr + chunk.toString()).slice(-4000);
    });
    const c = child;
    exited = new Promise<void>((resolve) => c.once('exit', () => resolve()));
  };
  spawnServer();
  const url = `postgres://postgres@127.0.0.1:${port}/postgres`;
  const halt = async (signal: NodeJS.Signals): Promise<void> => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill(signal);
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
    }
  };
  /** The postmaster's pid (first line of postmaster.pid), or undefined when it is not running. */
  const postmaster = (): number | undefined => {
    try {
      const pid = Number(readFileSync(join(data, 'postmaster.pid'), 'utf8').split('\n')[0]);
      process.kill(pid, 0);
      return pid;
    } catch {
      return undefined;
    }
  };
  const stop = async (): Promise<void> => {
    // Fast shutdown (ends sessions, no wait for clients), sent to the postmaster itself: as root our child is
    // runuser, which does not pass signals on, and a server signalled through it was left running.
    const pid = postmaster();
    if (pid !== undefined) {
      process.kill(pid, 'SIGINT');
      for (const end = Date.now() + 10_000; postmaster() !== undefined && Date.now() < end; ) await new Promise((r) => setTimeout(r, 50));
      if (postmaster() !== undefined) process.kill(pid, 'SIGKILL');
    }
    await halt('SIGINT');
    rmSync(dir, { recursive: true, force: true });
  };
  const ready = async (): Promise<void> => {
    const deadline = Date.now() + 30_000;
    for (;;) {
      if (child.exitCode !== null) {
        await stop();
        throw new Error(`postgres exited during start: ${stderr}`);
      }
      const client = new pg.Client({ connectionString: url });
      try {
        await client.connect();
        await client.end();
        break;
      } catch {
        await client.end().catch(() => undefined);
        if (Date.now() > deadline) {
          await stop();
          throw new Error(`postgres did not accept connections within 30 s: ${stderr}`);
        }
        await new Promise((r) => setTimeout(r, 100));
      }
    }
  };
  await ready();
  return {
    url,
    port,
    async down() {
      // Immediate shutdown, like a crash for the clients. The signal goes to the postmaster itself (its pid
      // in postmaster.pid): runuser, our child when we are root, does not pass SIGQUIT on.
      const pid = Number(readFileSync(join(data, 'postmaster.pid'), 'utf8').split('\n')[0]);
      process.kill(pid, 'SIGQUIT');
      await halt('SIGINT');
    },
    async up() {
      spawnServer();
      await ready();
    },
    async createDatabase(name = `t${process.pid}_${++counter}`) {
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      try {
        await client.query(`CREATE DATABASE "${name.replaceAll('"', '')}"`);
      } finally {
        await client.end();
      }
      return `postgres://postgres@127.0.0.1:${port}/${name}`;
    },
    stop,
  };
}
