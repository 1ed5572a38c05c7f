/**
 * A real Redis 7 server for a test file: `redis-server` on a free loopback port, no persistence, its own
 * temp folder, killed in afterAll. When the binary is missing the tests that need it skip with a message
 * (Debian package `redis-server`; .ci/run installs it).
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createConnection } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './cli.js';

export const REDIS_BIN = process.env.REDIS_SERVER_BIN ?? 'redis-server';

/** Whether redis-server can be run here; the reason when not. */
export function redisAvailable(): { ok: true } | { ok: false; reason: string } {
  try {
    const v = execFileSync(REDIS_BIN, ['--version'], { encoding: 'utf8' });
    const major = Number(/v=(\d+)/.exec(v)?.[1] ?? 0);
    if (major < 7) return { ok: false, reason: `redis-server ${major} found; Redis 7 or newer is needed` };
    return { ok: true };
  } catch {
    return { ok: false, reason: `${REDIS_BIN} not found: install the Debian package redis-server to run the Redis tests` };
  }
}

export interface RedisServer {
  url: string;
  port: number;
  /** Kills the server (SIGKILL: a crash, not a shutdown); `start()` brings it back on the same port. */
  kill(): Promise<void>;
  start(): Promise<void>;
  stop(): Promise<void>;
}

function waitForPort(port: number, deadlineMs: number): Promise<void> {
  const until = Date.now() + deadlineMs;
  return new Promise((resolve, reject) => {
    const attempt = () => {
      const s = createConnection({ host: '127.0.0.1', port });
      s.once('connect', () => {
        s.end();
        resolve();
      });
      s.once('error', () => {
        s.destroy();
        if (Date.now() > until) reject(new Error(`redis-server did not listen on ${port}`));
        else setTimeout(attempt, 50);
      });
    };
    attempt();
  });
}

/** Starts redis-server on a free port with persistence off. */
export async function startRedis(): Promise<RedisServer> {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'router-redis-'));
  let child: ChildProcess | undefined;
  const start = async () => {
    child = spawn(REDIS_BIN, ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir], { stdio: 'ignore' });
    await waitForPort(port, 10_000);
  };
  const kill = async () => {
    const c = child;
    child = undefined;
    if (!c || c.exitCode !== null) return;
    const exited = new Promise((r) => c.once('exit', r));
    c.kill('SIGKILL');
    await exited;
  };
  await start();
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    kill,
    start,
    async stop() {
      await kill();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
