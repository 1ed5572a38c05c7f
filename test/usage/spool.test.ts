/**
 * Cluster mode's usage writer (usage/spooling-writer.ts) against a real PostgreSQL 15 that is stopped and
 * started again mid-traffic (issue 29 item 5): rows recorded while the database is down wait in the on-disk
 * queue in the state folder and arrive, in order and once each, when it answers again; a node stopped with
 * rows queued stores them at its next start, never twice (row uids), even when part of them had committed.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bootServices, closeServices } from '../../src/daemon/boot.js';
import { Logger } from '../../src/daemon/logger.js';
import type { Outcome } from '../../src/daemon/proxy/outcome.js';
import type { Services } from '../../src/daemon/services.js';
import { migratePostgres } from '../../src/daemon/store/pg-migrate.js';
import { PostgresDriver } from '../../src/daemon/store/postgres-driver.js';
import { UsageService } from '../../src/daemon/usage/service.js';
import { SpoolingUsageWriter } from '../../src/daemon/usage/spooling-writer.js';
import { SqlUsageRepository } from '../../src/daemon/usage/sql-repository.js';
import { postgresUnavailable, startPostgres, type PostgresServer } from '../support/postgres.js';
import { eventually } from './helpers.js';

const missing = postgresUnavailable();

let home: string;
let services: Services;
let server: PostgresServer;
const drivers: PostgresDriver[] = [];

beforeAll(async () => {
  if (missing) return;
  home = mkdtempSync(join(tmpdir(), 'router-usage-spool-'));
  services = await bootServices({ home, host: '127.0.0.1', port: 0, log: new Logger() });
  server = await startPostgres();
}, 60_000);
afterAll(async () => {
  for (const d of drivers) await d.close().catch(() => undefined);
  await server?.stop();
  if (services) closeServices(services);
  if (home) rmSync(home, { recursive: true, force: true });
}, 30_000);

/** A fresh migrated database; its port, and a reader of its rows' trace ids in id order. */
async function database() {
  const url = await server.createDatabase();
  const driver = new PostgresDriver({ url, max: 4 });
  drivers.push(driver);
  await migratePostgres(driver);
  const repo = new SqlUsageRepository(driver);
  const traces = async () => (await driver.query<{ trace_id: string }>('SELECT trace_id FROM usage_log ORDER BY id')).map((r) => r.trace_id);
  return { driver, repo, traces };
}

/**
 * Takes the server down (down(): an immediate shutdown, a crash for its clients). The test server commits
 * asynchronously (synchronous_commit=off), so a checkpoint first keeps the commits it acknowledged.
 */
async function crash(driver: PostgresDriver): Promise<void> {
  await driver.run('CHECKPOINT');
  await server.down();
}

/** A usage service writing through a spooling writer (queue file in its own folder); log lines are collected. */
function node(repo: SqlUsageRepository, file: string) {
  const lines: string[] = [];
  const log = new Logger();
  for (const level of ['info', 'warn', 'error'] as const) log[level] = (msg: string) => void lines.push(`${level}: ${msg}`);
  const writer = new SpoolingUsageWriter({ repo, file, log, nodeId: 'node-a', retryMs: 100 });
  const usage = new UsageService({ db: services.db, settings: services.settings, events: services.events, log, repo, writer, flushDelayMs: 20 });
  return { usage, writer, lines };
}

let seq = 0;
function outcome(): Outcome {
  return {
    traceId: `spool-${++seq}`,
    call: { clientFormat: 'openai-chat', raw: {}, model: 'openai/gpt-4o', stream: false, endpoint: '/v1/chat/completions' },
    target: { provider: { id: 'openai' }, model: 'gpt-4o', publicModel: 'openai/gpt-4o', connectionId: 'conn-1' },
    auth: { via: 'api-key', key: { id: 'key-1' }, loopback: true, remoteAddress: '127.0.0.1' },
    t0: performance.now() - 3,
    status: 200,
    usage: { inputTokens: 12, outputTokens: 4 },
  } as unknown as Outcome;
}

/** Records `n` outcomes, `everyMs` apart; returns their trace ids in order. */
async function traffic(usage: UsageService, n: number, everyMs = 5): Promise<string[]> {
  const sent: string[] = [];
  for (let i = 0; i < n; i++) {
    const o = outcome();
    sent.push(o.traceId);
    usage.recordOutcome(o);
    await new Promise((r) => setTimeout(r, everyMs));
  }
  return sent;
}

/** Rows in the queue file's complete lines (read only: the writer may be appending). */
function queuedRows(file: string): number {
  if (!existsSync(file)) return 0;
  const text = readFileSync(file, 'utf8');
  const complete = text.slice(0, text.lastIndexOf('\n') + 1);
  return complete
    .split('\n')
    .filter(Boolean)
    .reduce((n, line) => n + (JSON.parse(line) as { rows: unknown[] }).rows.length, 0);
}

describe.skipIf(missing)(`usage rows while PostgreSQL is down${missing ? ` (skipped: ${missing})` : ''}`, () => {
  it('queues rows on disk while the database is stopped and stores them, in order and once each, when it is back', async () => {
    const { driver, repo, traces } = await database();
    const file = join(home, 'queue-a.jsonl');
    const { usage, lines } = node(repo, file);
    try {
      const before = await traffic(usage, 40);
      await eventually(async () => ((await traces()).length === 40 ? true : undefined), 10_000);
      await crash(driver);
      let during: string[];
      try {
        during = await traffic(usage, 60);
        // Nothing reached the database meanwhile: the rows are in the queue file, fsynced.
        await eventually(() => (queuedRows(file) === 60 && usage.stats().spooled === 60 ? true : undefined), 15_000);
        expect(lines).toContain('warn: shared database unreachable: usage rows are queued on disk until it answers again');
      } finally {
        await server.up();
      }
      const after = await traffic(usage, 40);
      await eventually(async () => ((await traces()).length >= 140 ? true : undefined), 20_000);
      await usage.flush();
      // Every row once, in the order recorded (the later rows waited behind the queued ones).
      expect(await traces()).toEqual([...before, ...during, ...after]);
      expect(statSync(file).size).toBe(0);
      expect(usage.stats().spooled).toBe(0);
      expect(lines).toContain('info: shared database reachable again: usage rows go to it');
    } finally {
      usage.close();
    }
  }, 90_000);

  it('a node stopped with rows queued stores them at its next start, never twice (some had committed)', async () => {
    const { driver, repo, traces } = await database();
    const file = join(home, 'queue-b.jsonl');
    await crash(driver);
    let sent: string[];
    try {
      const first = node(repo, file);
      sent = await traffic(first.usage, 30, 1);
      await first.usage.flush();
      // A row still in memory at shutdown is queued too.
      const last = outcome();
      first.usage.recordOutcome(last);
      sent.push(last.traceId);
      first.usage.close();
      expect(queuedRows(file)).toBe(31);
    } finally {
      await server.up();
    }
    // The first queued batch had in fact committed before the node lost the answer: store it as it was.
    const firstLine = readFileSync(file, 'utf8').split('\n')[0]!;
    const committed = JSON.parse(firstLine) as { rows: Parameters<SqlUsageRepository['insert']>[0] };
    expect(await repo.insert(committed.rows)).toBe(committed.rows.length);
    const restarted = node(repo, file);
    try {
      await eventually(async () => ((await traces()).length >= 31 && queuedRows(file) === 0 ? true : undefined), 20_000);
      expect(await traces()).toEqual(sent);
      expect(restarted.lines).toContain('info: usage rows queued on disk by the last run: storing them in the shared database');
    } finally {
      restarted.usage.close();
    }
  }, 90_000);

  it('drops a batch a crash cut in the middle of its line, and keeps the queue usable', async () => {
    const { driver, repo, traces } = await database();
    const file = join(home, 'queue-c.jsonl');
    await crash(driver);
    let kept: string[];
    try {
      const first = node(repo, file);
      kept = await traffic(first.usage, 5, 1);
      await first.usage.flush();
      first.usage.close();
    } finally {
      await server.up();
    }
    const whole = readFileSync(file, 'utf8');
    writeFileSync(file, `${whole}{"rows":[{"rec":{"ts":1,"trace`);
    const restarted = node(repo, file);
    try {
      expect(restarted.lines).toContain('warn: usage queue on disk: dropped a batch cut by a crash while it was being queued');
      await eventually(async () => ((await traces()).length >= 5 && queuedRows(file) === 0 ? true : undefined), 20_000);
      expect(await traces()).toEqual(kept);
    } finally {
      restarted.usage.close();
    }
  }, 60_000);
});
