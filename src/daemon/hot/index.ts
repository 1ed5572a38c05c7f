/**
 * Picks the hot-state adapter: Redis when a URL is configured (`--redis-url` > env `ROUTER_REDIS_URL`),
 * else the in-process one (one machine, exactly as before). See hot/port.ts.
 */
import { randomUUID } from 'node:crypto';
import type { Logger } from '../logger.js';
import { LocalHotState } from './local.js';
import type { HotState } from './port.js';

export type { HotHealth, HotState, HotWindow, CounterOp, CounterOutcome, HotMessage } from './port.js';
export { LocalHotState } from './local.js';

/** The Redis URL in effect: the flag, then the environment; undefined for one machine. */
export function redisUrlOf(flag: string | undefined, env: NodeJS.ProcessEnv = process.env): string | undefined {
  const url = flag ?? env.ROUTER_REDIS_URL;
  return url && url.trim() !== '' ? url.trim() : undefined;
}

/** Accepts `redis://`, `rediss://` (TLS) and `valkey://`-less URLs only; anything else is a start error. */
export function checkRedisUrl(url: string): void {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new Error('the Redis URL is not a URL (expected redis://[user:password@]host:port[/db])');
  }
  if (parsed.protocol !== 'redis:' && parsed.protocol !== 'rediss:') {
    throw new Error(`the Redis URL must start with redis:// or rediss:// (got ${parsed.protocol}//)`);
  }
}

export async function createHotState(options: { redisUrl?: string; nodeId?: string; log?: Logger }): Promise<HotState> {
  const nodeId = options.nodeId ?? randomUUID();
  if (!options.redisUrl) return new LocalHotState(nodeId);
  checkRedisUrl(options.redisUrl);
  // ioredis loads only when a Redis URL is given: one machine never holds it (docs/performance.md).
  const { RedisHotState } = await import('./redis.js');
  return new RedisHotState({ url: options.redisUrl, nodeId, log: options.log, prefix: process.env.ROUTER_REDIS_PREFIX || undefined });
}
