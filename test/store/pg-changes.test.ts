/**
 * The PostgreSQL change feed (store/pg-changes.ts) on a real PostgreSQL 15: notices reach the other nodes'
 * subscribers (never the publisher's own), per topic; the listening connection comes back by itself after
 * it is killed and then calls every subscriber once (notices may have been missed); reloads of a topic never
 * overlap and notices during one are coalesced into one more round.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migratePostgres } from '../../src/daemon/store/pg-migrate.js';
import { PostgresChangeFeed } from '../../src/daemon/store/pg-changes.js';
import { PostgresDriver } from '../../src/daemon/store/postgres-driver.js';
import { postgresUnavailable, startPostgres, type PostgresServer } from '../support/postgres.js';

const missing = postgresUnavailable();
let server: PostgresServer;
let url: string;
const closers: Array<() => Promise<void>> = [];

beforeAll(async () => {
  if (missing) return;
  server = await startPostgres();
  url = await server.createDatabase();
  const d = new PostgresDriver({ url, max: 2 });
  await migratePostgres(d);
  await d.close();
}, 60_000);
afterAll(async () => {
  for (const c of closers.reverse()) await c();
  await server?.stop();
}, 30_000);

async function feed(nodeId: string, onConnection?: (up: boolean) => void): Promise<{ feed: PostgresChangeFeed; driver: PostgresDriver }> {
  const driver = new PostgresDriver({ url, max: 2, applicationName: `feed-${nodeId}` });
  const f = new PostgresChangeFeed({ driver, nodeId, onConnection });
  closers.push(async () => {
    await f.close();
    await driver.close();
  });
  await f.start();
  return { feed: f, driver };
}

async function until(probe: () => boolean | Promise<boolean>, ms: number, what: string): Promise<number> {
  const start = Date.now();
  while (!(await probe())) {
    if (Date.now() - start > ms) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
  return Date.now() - start;
}

describe.skipIf(missing)(`PostgreSQL change feed${missing ? ` (skipped: ${missing})` : ''}`, () => {
  it("a notice reaches the other nodes' subscribers of its topic within a second, never the publisher's own", async () => {
    const a = await feed('a');
    const b = await feed('b');
    const c = await feed('c');
    const heard: string[] = [];
    a.feed.subscribe('keys', () => void heard.push('a:keys'));
    b.feed.subscribe('keys', () => void heard.push('b:keys'));
    c.feed.subscribe('keys', () => void heard.push('c:keys'));
    c.feed.subscribe('combos', () => void heard.push('c:combos'));
    a.feed.publish('keys');
    const took = await until(() => heard.includes('b:keys') && heard.includes('c:keys'), 1_000, 'the notice on b and c');
    expect(took).toBeLessThan(1_000);
    await new Promise((r) => setTimeout(r, 200));
    expect(heard.sort()).toEqual(['b:keys', 'c:keys']);
  });

  it('the listening connection comes back after it is killed, calls every subscriber once, and hears notices again', async () => {
    const states: boolean[] = [];
    const b = await feed('b2', (up) => states.push(up));
    const a = await feed('a2');
    const heard: string[] = [];
    b.feed.subscribe('keys', () => void heard.push('keys'));
    b.feed.subscribe('settings', () => void heard.push('settings'));
    const killed = await a.driver.query<{ n: number }>(
      "SELECT count(pg_terminate_backend(pid)) AS n FROM pg_stat_activity WHERE application_name = 'feed-b2' AND query LIKE 'LISTEN%'",
    );
    expect(killed[0]!.n).toBe(1);
    await until(() => states.includes(false), 2_000, 'the loss to be seen');
    await until(() => b.feed.connected(), 5_000, 'the reconnect');
    await until(() => heard.length === 2, 1_000, 'the reload of every topic');
    expect(heard.sort()).toEqual(['keys', 'settings']);
    heard.length = 0;
    a.feed.publish('settings');
    await until(() => heard.includes('settings'), 1_000, 'a notice after the reconnect');
  });

  it('reloads of one topic never overlap; notices during one are coalesced into one more round', async () => {
    const b = await feed('b3');
    const a = await feed('a3');
    let active = 0;
    let maxActive = 0;
    let runs = 0;
    b.feed.subscribe('combos', async () => {
      active++;
      maxActive = Math.max(maxActive, active);
      runs++;
      await new Promise((r) => setTimeout(r, 300));
      active--;
    });
    a.feed.publish('combos');
    await until(() => runs === 1, 1_000, 'the first reload');
    for (let i = 0; i < 5; i++) a.feed.publish('combos');
    await until(() => runs === 2 && active === 0, 3_000, 'one more reload');
    await new Promise((r) => setTimeout(r, 500));
    expect(runs).toBe(2);
    expect(maxActive).toBe(1);
  });
});
