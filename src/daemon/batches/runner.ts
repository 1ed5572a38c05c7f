import type { BatchDeps } from './deps.js';
import type { RouterError } from '../http/errors.js';
import type { BatchLine } from './jsonl.js';
import { callLine, errorLine, ownerAuth, resultLine, type LineReply } from './line-call.js';
import type { BatchRepository } from './port.js';
import type { BatchRow } from './store.js';

/**
 * Local mode: router sends a batch's lines itself, through the executor, at most `batchConcurrency` at a
 * time across all batches. A line that is refused for a short while (429 with a wait up to five minutes,
 * 503 with an open circuit) is put back and its model paused for the wait; every other reply is final and
 * committed at once, so a restart (even a SIGKILL) continues with the lines that have no result yet.
 */

/** A refusal waited out rather than written as the line's result, at most this many times per line. */
const MAX_WAITS = 12;
/** Longest wait a line is held for; a longer Retry-After (a daily quota) is a final failure. */
const MAX_WAIT_S = 300;

/** Shared limit of batch requests in flight (the `batchConcurrency` setting, read on each acquire). */
export class Limiter {
  private active = 0;
  private waiting: (() => void)[] = [];

  constructor(private readonly max: () => number) {}

  /** Takes a slot; false (and no slot) when `handle` is halted first, e.g. its batch expired while waiting. */
  async acquire(handle: RunHandle): Promise<boolean> {
    if (handle.stop !== 'none') return false;
    if (this.active < this.max()) {
      this.active++;
      return true;
    }
    return new Promise<boolean>((resolve) => {
      const granted = () => {
        handle.forget(halted);
        resolve(true);
      };
      const halted = () => {
        const i = this.waiting.indexOf(granted);
        if (i !== -1) this.waiting.splice(i, 1);
        resolve(false);
      };
      this.waiting.push(granted);
      handle.onHalt(halted);
    });
  }

  release(): void {
    const next = this.waiting.shift();
    if (next) next();
    else this.active--;
  }
}

/** Why a batch stopped before its lines were done: cancelled, its completion window passed, or the daemon stops. */
export type StopReason = 'cancel' | 'expire' | 'shutdown';

/** What a running batch exposes to its owner (cancel, expiry, shutdown). */
export class RunHandle {
  stop: 'none' | StopReason = 'none';
  private readonly sleepers = new Set<() => void>();
  private expiry?: NodeJS.Timeout;
  private lease?: NodeJS.Timeout;

  /** Stops the batch's workers: in-flight lines finish, sleeping and waiting ones wake at once. */
  halt(reason: StopReason): void {
    if (this.stop === 'none') this.stop = reason;
    clearTimeout(this.expiry);
    clearTimeout(this.lease);
    const wake = [...this.sleepers];
    this.sleepers.clear();
    for (const fn of wake) fn();
  }

  /** Halts with `expire` at `atMs` (epoch ms; at once when it has passed): the batch's completion window. */
  expireAt(atMs: number): void {
    const wait = atMs - Date.now();
    if (wait <= 0) return this.halt('expire');
    // setTimeout's longest delay is about 24.8 days; a 168 h window is well inside it.
    this.expiry = setTimeout(() => this.halt('expire'), wait);
    this.expiry.unref();
  }

  /**
   * The run's lease (a cluster) ends at `atMs` unless renewed again: then it stops as on shutdown (no line
   * sent after it, nothing finalized), so a node cut off from the database never runs a batch another
   * node has taken over.
   */
  leaseUntil(atMs: number): void {
    clearTimeout(this.lease);
    if (this.stop !== 'none') return;
    this.lease = setTimeout(() => this.halt('shutdown'), Math.max(0, atMs - Date.now()));
    this.lease.unref();
  }

  /** The run is over: its timers are not needed any more. */
  settle(): void {
    clearTimeout(this.expiry);
    clearTimeout(this.lease);
  }

  /** Calls `fn` once when the batch is halted (at once if it is). */
  onHalt(fn: () => void): void {
    if (this.stop !== 'none') return fn();
    this.sleepers.add(fn);
  }

  /** Drops an {@link onHalt} callback that is no longer needed. */
  forget(fn: () => void): void {
    this.sleepers.delete(fn);
  }

  /** Sleeps up to `ms`, returning early when the batch is stopped. */
  pause(ms: number): Promise<void> {
    if (this.stop !== 'none') return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.sleepers.delete(done);
        resolve();
      };
      const timer = setTimeout(done, Math.max(0, ms));
      this.sleepers.add(done);
    });
  }
}

function shouldWait(reply: LineReply): number | undefined {
  const wait = reply.retryAfter ?? 1;
  if (reply.status === 429 && wait <= MAX_WAIT_S) return wait;
  if (reply.status === 503 && reply.code === 'provider_circuit_open' && wait <= MAX_WAIT_S) return wait;
  return undefined;
}

/**
 * Sends every line of `batch` without a result. Returns how it ended: `done` (all lines have a result),
 * `expired` (the completion window closed first: the lines not sent are error lines with OpenAI's
 * `batch_expired` code), or `stopped` (cancelled or shutting down).
 */
export async function runLocal(
  services: BatchDeps,
  store: BatchRepository,
  limiter: Limiter,
  batch: BatchRow,
  lines: BatchLine[],
  handle: RunHandle,
): Promise<'done' | 'expired' | 'stopped'> {
  const route = services.routes.find(batch.endpoint);
  const done = await store.doneLines(batch.id);
  const queue = lines.map((_, i) => i).filter((i) => !done.has(i));
  const waits = new Map<number, number>();
  /** Per model: no line of it is sent before this time (ms), after a 429 or an open circuit. */
  const notBefore = new Map<string, number>();
  const expiresMs = (batch.expires_at ?? Infinity) * 1000;

  const worker = async () => {
    for (;;) {
      if (Date.now() >= expiresMs) handle.halt('expire');
      if (handle.stop !== 'none') return;
      const index = queue.shift();
      if (index === undefined) return;
      const line = lines[index]!;
      const model = line.body.model;
      const wait = (notBefore.get(model) ?? 0) - Date.now();
      if (wait > 0) {
        queue.unshift(index);
        await handle.pause(Math.min(wait, expiresMs - Date.now()));
        continue;
      }
      let reply: LineReply;
      if (!(await limiter.acquire(handle))) {
        queue.unshift(index);
        return;
      }
      try {
        const auth = (() => {
          try {
            return ownerAuth(services.keys, batch.key_id, batch.endpoint);
          } catch (err) {
            return err as RouterError;
          }
        })();
        reply = route
          ? await callLine(services, route, auth, line)
          : { status: 404, body: { error: { message: `No route serves ${batch.endpoint}.`, type: 'not_found_error', code: 'not_found' } }, requestId: '' };
      } finally {
        limiter.release();
      }
      const waitS = shouldWait(reply);
      const n = waits.get(index) ?? 0;
      if (waitS !== undefined && n < MAX_WAITS) {
        waits.set(index, n + 1);
        notBefore.set(model, Math.max(notBefore.get(model) ?? 0, Date.now() + waitS * 1000));
        queue.unshift(index);
        continue;
      }
      await store.finishLine(batch.id, { line: index, ok: reply.status >= 200 && reply.status < 300, result: resultLine(line.custom_id, reply) });
    }
  };

  const workers = Math.max(1, Math.min(services.settings.get().batchConcurrency, queue.length));
  await Promise.all(Array.from({ length: workers }, worker));
  if (handle.stop === 'expire' && queue.length > 0) {
    const text = 'This request could not be executed before the completion window expired.';
    await store.recordLines(batch.id, queue.map((index) => ({ line: index, ok: false, result: errorLine(lines[index]!.custom_id, 'batch_expired', text) })), false);
    return 'expired';
  }
  // A window that closed while the last lines were in flight still leaves every line answered: done.
  return queue.length === 0 && (handle.stop === 'none' || handle.stop === 'expire') ? 'done' : 'stopped';
}
