/**
 * The usage writer worker (dist/daemon/usage/writer-worker.js, as the daemon runs it) driven in-process:
 * rows are readable through the main connection right after `await flush()`; close() returns only once
 * the worker has written everything; a worker that dies falls back to this thread without losing or
 * duplicating rows.
 */
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { bootServices, closeServices } from '../../src/daemon/boot.js';
import { Logger } from '../../src/daemon/logger.js';
import type { Outcome } from '../../src/daemon/proxy/outcome.js';
import type { Services } from '../../src/daemon/services.js';
import { UsageService } from '../../src/daemon/usage/service.js';
import { eventually } from './helpers.js';

const WORKER = new URL('../../dist/daemon/usage/writer-worker.js', import.meta.url);

let home: string;
let services: Services;
const open: UsageService[] = [];

beforeAll(async () => {
  home = mkdtempSync(join(tmpdir(), 'router-usage-writer-'));
  services = await bootServices({ home, host: '127.0.0.1', port: 0, log: new Logger() });
});
afterAll(() => {
  if (services) closeServices(services);
  rmSync(home, { recursive: true, force: true });
});
afterEach(() => {
  for (const u of open.splice(0)) u.close();
  services.db.exec('DELETE FROM usage_log');
});

let seq = 0;
function outcome(): Outcome {
  return {
    traceId: `writer-${++seq}`,
    call: { clientFormat: 'openai-chat', raw: {}, model: 'openai/gpt-4o', stream: false, endpoint: '/v1/chat/completions' },
    target: { provider: { id: 'openai' }, model: 'gpt-4o', publicModel: 'openai/gpt-4o', connectionId: 'conn-1' },
    auth: { via: 'api-key', key: { id: 'key-1' }, loopback: true, remoteAddress: '127.0.0.1' },
    t0: performance.now() - 5,
    status: 200,
    usage: { inputTokens: 10, outputTokens: 5 },
  } as unknown as Outcome;
}

/** A usage service on the shared database whose rows go to the worker at `url`; errors are collected. */
function service(url: URL, extra: { batchSize?: number } = {}): { usage: UsageService; errors: string[] } {
  const errors: string[] = [];
  const log = new Logger();
  log.error = (msg: string, data?: Record<string, unknown>) => void errors.push(`${msg} ${JSON.stringify(data)}`);
  const usage = new UsageService({ db: services.db, settings: services.settings, events: services.events, log, flushIntervalMs: 60_000, writerUrl: url, ...extra });
  open.push(usage);
  return { usage, errors };
}

/** Records `n` outcomes at a time through `usage`; `sent` holds their trace ids in order. */
function recorder(usage: { recordOutcome(o: ReturnType<typeof outcome>): void }) {
  const sent: string[] = [];
  const record = (n: number) => {
    for (let i = 0; i < n; i++) {
      const o = outcome();
      sent.push(o.traceId);
      usage.recordOutcome(o);
    }
  };
  return { sent, record };
}

const traces = () => (services.db.prepare('SELECT trace_id FROM usage_log ORDER BY id').all() as Array<{ trace_id: string }>).map((r) => r.trace_id);

describe('writer worker', () => {
  it('is built (npx tsc -p .)', () => {
    expect(existsSync(WORKER), `${WORKER.pathname} is missing: build first`).toBe(true);
  });

  it('writes in the worker; rows are readable right after await flush()', async () => {
    const { usage, errors } = service(WORKER, { batchSize: 4 });
    const { sent, record } = recorder(usage);
    record(4);
    // A full batch is handed to the worker on the next turn, without a flush.
    await new Promise((r) => setImmediate(r));
    expect(usage.stats().writer).toBe('worker');
    record(3);
    // flush() covers both the queued rows and the batch the worker may still be writing.
    expect(await usage.flush()).toBe(3);
    expect(traces()).toEqual(sent);
    expect(usage.stats()).toMatchObject({ queued: 0, written: 7, writer: 'worker' });
    expect(errors).toEqual([]);
  });

  it('close() returns once the worker has written every queued and in-flight row', async () => {
    const { usage, errors } = service(WORKER, { batchSize: 5 });
    const { sent, record } = recorder(usage);
    record(10);
    await new Promise((r) => setImmediate(r)); // two batches in flight to the worker
    record(2); // queued
    expect(usage.stats()).toMatchObject({ queued: 12, writer: 'worker' });
    usage.close();
    expect(traces()).toEqual(sent);
    expect(usage.stats()).toMatchObject({ queued: 0, written: 12 });
    expect(errors).toEqual([]);
  });

  describe('when the worker dies', () => {
    let dir: string;
    beforeAll(() => {
      dir = mkdtempSync(join(tmpdir(), 'router-usage-crash-'));
      // Dies on its first batch before writing anything.
      writeFileSync(join(dir, 'dies-at-once.mjs'), `import { parentPort } from 'node:worker_threads';\nparentPort.on('message', () => { throw new Error('boom'); });\n`);
      // Writes its first batch for real (the real worker), then dies before the acknowledgement leaves.
      writeFileSync(
        join(dir, 'dies-after-commit.mjs'),
        `import { parentPort, workerData } from 'node:worker_threads';\n` +
          `workerData.port.postMessage = () => {};\n` +
          `await import(${JSON.stringify(WORKER.href)});\n` +
          `parentPort.on('message', () => { throw new Error('boom after commit'); });\n`,
      );
    });
    afterAll(() => rmSync(dir, { recursive: true, force: true }));

    for (const [file, what] of [
      ['dies-at-once.mjs', 'before writing'],
      ['dies-after-commit.mjs', 'after committing, unacknowledged'],
    ] as const) {
      it(`${what}: logs, writes on this thread, no row lost or duplicated`, async () => {
        const { usage, errors } = service(pathToFileURL(join(dir, file)), { batchSize: 3 });
        const { sent, record } = recorder(usage);
        record(3);
        await new Promise((r) => setImmediate(r)); // the batch goes to the worker
        await eventually(() => (usage.stats().writer === 'main' ? true : undefined));
        expect(errors.some((e) => /usage writer worker failed/.test(e))).toBe(true);
        expect(traces()).toEqual(sent);
        // Later rows are written on this thread, synchronously.
        record(2);
        void usage.flush();
        expect(traces()).toEqual(sent);
        expect(usage.stats()).toMatchObject({ queued: 0, written: 5, writer: 'main' });
      });
    }
  });
});
