import type { AuthInfo } from '../auth/pipeline.js';
import { badRequest, RouterError } from '../http/errors.js';
import type { BatchDeps } from './deps.js';
import { LOCAL_CHANGES, type ChangeFeed } from '../store/changes.js';
import type { BatchFinishedData } from '../events/types.js';
import { FileService } from './files.js';
import { BATCH_ENDPOINTS, readBatchLines, type BatchLine } from './jsonl.js';
import { ownerAuth } from './line-call.js';
import { nativePlan, runNative } from './native.js';
import type { BatchLeases, BatchRepository, FileContents } from './port.js';
import { Limiter, RunHandle, runLocal } from './runner.js';
import { FINAL_STATUSES, newId, nowSeconds, type BatchRow, type BatchStatus } from './store.js';

/**
 * The Batch API's state machine (docs/batch.md): create (validating) -> in_progress -> finalizing ->
 * completed, or failed / expired / cancelling -> cancelled. Runs each batch locally through the executor
 * or, in native mode, as a provider batch; picks unfinished batches up again at start. In a cluster each
 * running batch is leased by the node running it (batches/leases.ts): renewed while it runs, taken over by
 * another node once a dead node's lease lapses, continuing from the lines not yet recorded.
 */

/** The change-feed topic of batches: another node cancelled one (its runner checks its batches at once). */
export const BATCHES_TOPIC = 'batches';

export interface BatchServiceOptions {
  repo: BatchRepository;
  contents: FileContents;
  leases: BatchLeases;
  /** The `batchConcurrency` setting, read on each acquire. */
  concurrency: () => number;
  changes?: ChangeFeed;
  /** The pipeline, keys and routes the lines run through. */
  deps: BatchDeps;
}

/** What `POST /v1/batches` takes. */
export interface CreateBatch {
  input_file_id: string;
  endpoint: string;
  completion_window: string;
  metadata?: Record<string, string> | null;
  mode?: 'local' | 'native' | 'auto';
}

/** The caller's view: API keys see their own files and batches; the dashboard and CLI see all. */
export function ownerOf(auth: AuthInfo): string | undefined {
  return auth.key?.id;
}

const WINDOW_RE = /^(\d{1,3})h$/;

/** How often expired files are deleted. */
const FILE_SWEEP_MS = 10 * 60_000;

/**
 * How long one hour of `completion_window` lasts, ms. Tests shorten it through the environment variable
 * ROUTER_TEST_BATCH_HOUR_MS (read here only, once at start; docs/batch.md "Testing"), so a batch can
 * expire in seconds without a route or a setting that production could reach.
 */
function windowHourMs(): number {
  const v = Number(process.env.ROUTER_TEST_BATCH_HOUR_MS);
  return Number.isInteger(v) && v >= 1000 ? v : 3_600_000;
}

export class BatchService {
  readonly store: BatchRepository;
  readonly files: FileService;
  private readonly leases: BatchLeases;
  private readonly changes: ChangeFeed;
  private readonly limiter: Limiter;
  private readonly running = new Map<string, { handle: RunHandle; done: Promise<void> }>();
  private readonly deps: BatchDeps;
  private closed = false;
  /** Set by a graceful stop's drain: this node takes no batch over any more. */
  private stopping = false;
  private readonly hourMs = windowHourMs();
  private sweeper?: NodeJS.Timeout;
  private leaseTimer?: NodeJS.Timeout;
  private unsubscribe?: () => void;
  private checking?: Promise<void>;

  constructor(opts: BatchServiceOptions) {
    this.store = opts.repo;
    this.leases = opts.leases;
    this.changes = opts.changes ?? LOCAL_CHANGES;
    this.files = new FileService(this.store, opts.contents);
    this.limiter = new Limiter(opts.concurrency);
    this.deps = opts.deps;
  }

  /**
   * Starts background work (boot.ts, once the daemon is composed): resumes the batches a stop left
   * unfinished (one machine: all of them; a cluster: those no live node holds, this node's own included).
   */
  async resume(): Promise<void> {
    const unfinished = await this.store.unfinished();
    for (const row of unfinished) if (await this.leases.claim(row.id)) this.launch(row);
    // Expired files go at start and every few minutes (and before any lookup: files.ts).
    const sweep = () => void this.files.sweepAll().catch((err: unknown) => this.logError('file sweep failed', err));
    sweep();
    this.sweeper = setInterval(sweep, FILE_SWEEP_MS);
    this.sweeper.unref();
    if (this.leases.shared) {
      // A third of a lease: two renewals may fail before it lapses.
      this.leaseTimer = setInterval(() => void this.check(), Math.max(100, Math.floor(this.leases.ttlMs / 3)));
      this.leaseTimer.unref();
      this.unsubscribe = this.changes.subscribe(BATCHES_TOPIC, () => void this.check());
    }
  }

  private logError(message: string, err: unknown): void {
    this.deps.log.error(message, { error: err instanceof Error ? err.message : String(err) });
  }

  /** One lease round at a time (the timer and change notices may overlap). */
  private check(): Promise<void> {
    this.checking ??= this.leaseRound()
      .catch((err: unknown) => this.logError('batch lease renewal failed', err))
      .finally(() => (this.checking = undefined));
    return this.checking;
  }

  /**
   * A cluster's lease round: renews this node's leases (a run whose lease another node took stops at once,
   * without finalizing), stops runs another node cancelled, and takes over the batches whose node died.
   */
  private async leaseRound(): Promise<void> {
    if (this.closed || this.stopping) return;
    const ids = [...this.running.keys()];
    const held = await this.leases.renew(ids);
    const until = Date.now() + this.leases.ttlMs;
    for (const id of ids) {
      const run = this.running.get(id);
      if (!run) continue;
      if (!held.has(id)) {
        this.deps.log.warn('batch lease lost to another node: this node stops running it', { batch: id });
        run.handle.halt('shutdown');
        continue;
      }
      run.handle.leaseUntil(until);
      if (run.handle.stop === 'none' && (await this.store.batch(id))?.status === 'cancelling') run.handle.halt('cancel');
    }
    for (const id of await this.leases.lapsed()) {
      if (this.closed || this.stopping || this.running.has(id) || !(await this.leases.claim(id))) continue;
      const row = await this.store.batch(id);
      if (!row || FINAL_STATUSES.has(row.status)) {
        await this.leases.release([id]);
        continue;
      }
      this.deps.log.info('batch taken over from a node whose lease lapsed', { batch: id });
      this.launch(row);
    }
  }

  /**
   * A graceful stop's first step: no batch sends another line, and the lines in flight finish and are
   * recorded, so the next start does not send them again. Resolves when every run has ended, or after
   * `graceMs` (lines still in flight then are not recorded and are sent again at the next start).
   */
  async drain(graceMs: number): Promise<void> {
    this.stopping = true;
    clearInterval(this.leaseTimer);
    const ids = [...this.running.keys()];
    const runs = [...this.running.values()];
    for (const { handle } of runs) handle.halt('shutdown');
    let timer: NodeJS.Timeout | undefined;
    const grace = new Promise<void>((resolve) => (timer = setTimeout(resolve, graceMs)));
    const ended = await Promise.race([Promise.all(runs.map((r) => r.done)).then(() => true), grace.then(() => false)]);
    clearTimeout(timer);
    // Runs that ended let go of their batches: another node of a cluster continues them at once.
    if (ended) await this.leases.release(ids).catch((err: unknown) => this.logError('batch lease release failed', err));
  }

  /** Stops every running batch; lines still in flight are not recorded, so they are sent again at the next start. */
  close(): void {
    this.closed = true;
    clearInterval(this.sweeper);
    clearInterval(this.leaseTimer);
    this.unsubscribe?.();
    for (const { handle } of this.running.values()) handle.halt('shutdown');
  }

  /** Waits for a batch's run to end (tests, deletion). */
  async settled(id: string): Promise<void> {
    await this.running.get(id)?.done;
  }

  /** The OpenAI batch object of a row (plus router's `mode`). */
  view(row: BatchRow): Record<string, unknown> {
    const errors = row.errors ? { object: 'list', data: JSON.parse(row.errors) as unknown[] } : null;
    return {
      id: row.id,
      object: 'batch',
      endpoint: row.endpoint,
      errors,
      input_file_id: row.input_file_id,
      completion_window: row.completion_window,
      status: row.status,
      output_file_id: row.output_file_id,
      error_file_id: row.error_file_id,
      created_at: row.created_at,
      in_progress_at: row.in_progress_at,
      expires_at: row.expires_at,
      finalizing_at: row.finalizing_at,
      completed_at: row.completed_at,
      failed_at: row.failed_at,
      expired_at: row.expired_at,
      cancelling_at: row.cancelling_at,
      cancelled_at: row.cancelled_at,
      request_counts: { total: row.total, completed: row.completed, failed: row.failed },
      metadata: row.metadata ? (JSON.parse(row.metadata) as unknown) : null,
      mode: row.mode,
      api_key_id: row.key_id,
    };
  }

  /** A batch the caller may see (404 otherwise). */
  async get(id: string, keyId: string | undefined): Promise<BatchRow> {
    const row = await this.store.batch(id);
    if (!row || (keyId !== undefined && row.key_id !== keyId)) throw new RouterError(404, `No such Batch object: ${id.slice(0, 100)}`);
    return row;
  }

  /** Checks a new batch against its input file and starts it. */
  async create(auth: AuthInfo, body: CreateBatch): Promise<BatchRow> {
    if (!BATCH_ENDPOINTS.includes(body.endpoint)) throw badRequest(`Endpoint '${body.endpoint.slice(0, 100)}' is not supported; use one of ${BATCH_ENDPOINTS.join(', ')}.`, 'endpoint');
    const window = WINDOW_RE.exec(body.completion_window);
    if (!window || Number(window[1]) < 1 || Number(window[1]) > 168) throw badRequest("completion_window must be '24h' (or another whole number of hours up to 168h).", 'completion_window');
    const keyId = ownerOf(auth) ?? null;
    // The owner must be allowed to call the endpoint its lines name (path: scopes), now and when they run.
    ownerAuth(this.deps.keys, keyId, body.endpoint);
    const file = await this.files.get(body.input_file_id, ownerOf(auth));
    if (file.purpose !== 'batch') throw badRequest(`File ${file.id} has purpose '${file.purpose}'; a batch needs a file uploaded with purpose 'batch'.`, 'input_file_id');
    const lines = readBatchLines(await this.files.readText(file.id));
    const wrong = lines.findIndex((l) => l.url !== body.endpoint);
    if (wrong !== -1) throw badRequest(`Line ${wrong + 1} of the file has url '${lines[wrong]!.url}', but the batch's endpoint is ${body.endpoint}.`, 'input_file_id');
    const mode = body.mode ?? 'local';
    let native: ReturnType<typeof nativePlan> | undefined;
    if (mode !== 'local') {
      native = nativePlan(this.deps, body.endpoint, lines);
      if (typeof native === 'string') {
        if (mode === 'native') throw badRequest(`This batch cannot run natively: ${native}`, 'mode');
        native = undefined;
      }
    }
    const created = nowSeconds();
    const row: BatchRow = {
      id: newId('batch_'),
      key_id: keyId,
      endpoint: body.endpoint,
      input_file_id: file.id,
      completion_window: body.completion_window,
      mode: native ? 'native' : 'local',
      status: 'validating',
      metadata: body.metadata ? JSON.stringify(body.metadata) : null,
      total: lines.length,
      completed: 0,
      failed: 0,
      output_file_id: null,
      error_file_id: null,
      errors: null,
      native: native ? JSON.stringify(native) : null,
      created_at: created,
      in_progress_at: null,
      expires_at: created + Math.ceil((Number(window[1]) * this.hourMs) / 1000),
      finalizing_at: null,
      completed_at: null,
      failed_at: null,
      expired_at: null,
      cancelling_at: null,
      cancelled_at: null,
    };
    // Leased before it is stored: no other node takes the new batch over while this one starts it.
    await this.leases.claim(row.id);
    await this.store.addBatch(row);
    this.launch(row, lines);
    return row;
  }

  /**
   * Asks a batch to stop: lines in flight finish, the rest are not sent; it ends `cancelled`. A batch
   * another live node runs is stopped by that node (told through the change feed, or at its next lease
   * round); one nobody runs is finished here.
   */
  async cancel(row: BatchRow): Promise<BatchRow> {
    if (FINAL_STATUSES.has(row.status) || row.status === 'cancelling') return row;
    await this.store.setStatus(row.id, 'cancelling');
    const run = this.running.get(row.id);
    if (run) run.handle.halt('cancel');
    else if (await this.leases.claim(row.id)) this.launch((await this.store.batch(row.id))!);
    else this.changes.publish(BATCHES_TOPIC);
    return (await this.store.batch(row.id))!;
  }

  /** Deletes a finished batch and the output and error files it produced (its input file stays). */
  async remove(row: BatchRow): Promise<void> {
    if (!FINAL_STATUSES.has(row.status)) throw new RouterError(409, `Batch ${row.id} is ${row.status}; cancel it first.`);
    for (const id of [row.output_file_id, row.error_file_id]) if (id) await this.files.remove(id);
    await this.store.removeBatch(row.id);
  }

  /** True when an unfinished batch reads this file (it may not be deleted meanwhile). */
  fileInUse(fileId: string): Promise<boolean> {
    return this.store.fileInUse(fileId);
  }

  private launch(row: BatchRow, lines?: BatchLine[]): void {
    const handle = new RunHandle();
    if (this.leases.shared) handle.leaseUntil(Date.now() + this.leases.ttlMs);
    if (row.status === 'cancelling') handle.halt('cancel');
    // The completion window: lines not sent by then end `batch_expired` (native: the provider batch is cancelled).
    if (row.expires_at !== null) handle.expireAt(row.expires_at * 1000);
    const done = this.run(row, handle, lines)
      .catch((err: unknown) => {
        // Stopping, or the lease went to another node: the batch is not this node's to fail.
        if (this.closed || handle.stop === 'shutdown') return;
        this.deps.log.error('batch run failed', { batch: row.id, error: err instanceof Error ? err.message : String(err) });
        return this.finish(row.id, 'failed', [{ code: 'internal_error', message: 'The batch stopped on an internal error; see the daemon log.' }]);
      })
      .catch((err: unknown) => this.logError('batch could not be marked failed', err))
      .finally(() => {
        handle.settle();
        this.running.delete(row.id);
      });
    this.running.set(row.id, { handle, done });
  }

  private async run(row: BatchRow, handle: RunHandle, given?: BatchLine[]): Promise<void> {
    const services = this.deps;
    let lines: BatchLine[];
    try {
      lines = given ?? readBatchLines(await this.files.readText(row.input_file_id));
    } catch {
      return await this.finish(row.id, 'failed', [{ code: 'invalid_file', message: `The input file ${row.input_file_id} is gone or unreadable.` }]);
    }
    if (row.status === 'validating') await this.store.setStatus(row.id, 'in_progress');
    const current = (await this.store.batch(row.id))!;
    const ended =
      current.mode === 'native'
        ? await runNative(services, this.store, current, lines, handle)
        : await runLocal(services, this.store, this.limiter, current, lines, handle);
    if (this.closed || handle.stop === 'shutdown' || ended === 'stopped' && handle.stop === 'none') return;
    if (typeof ended === 'object') {
      await this.finalize(row.id, 'failed', [{ code: 'provider_batch_failed', message: ended.failed }]);
      return;
    }
    await this.finalize(row.id, handle.stop === 'cancel' ? 'cancelled' : ended === 'expired' ? 'expired' : 'completed');
  }

  /** Writes the output and error files from the recorded lines, then the final status and its event. */
  private async finalize(id: string, status: 'completed' | 'expired' | 'cancelled' | 'failed', errors?: { code: string; message: string }[]): Promise<void> {
    const row = (await this.store.batch(id))!;
    if (status === 'completed') await this.store.setStatus(id, 'finalizing');
    const output = await this.files.write(row.key_id, `${id}_output.jsonl`, this.store.results(id, true));
    const errorFile = await this.files.write(row.key_id, `${id}_error.jsonl`, this.store.results(id, false));
    if (this.closed) return;
    await this.finish(id, status, errors, { output_file_id: output?.id ?? null, error_file_id: errorFile?.id ?? null });
  }

  private async finish(id: string, status: BatchStatus, errors?: { code: string; message: string }[], extra: Partial<BatchRow> = {}): Promise<void> {
    await this.store.setStatus(id, status, { ...extra, ...(errors ? { errors: JSON.stringify(errors) } : {}) });
    await this.leases.release([id]);
    const row = (await this.store.batch(id))!;
    const data: BatchFinishedData = {
      batch_id: row.id,
      status: row.status,
      api_key_id: row.key_id,
      endpoint: row.endpoint,
      mode: row.mode,
      total: row.total,
      completed: row.completed,
      failed: row.failed,
      output_file_id: row.output_file_id,
      error_file_id: row.error_file_id,
    };
    // A batch ends once, whichever node of a cluster ran or resumed it: webhooks deliver its end once.
    const once = `batch:${row.id}:${status}`;
    if (status === 'completed') this.deps.events.emit('batch.completed', data, once);
    else if (status === 'failed' || status === 'expired') this.deps.events.emit('batch.failed', data, once);
    // Its own name, not batch.failed: a cancel is the owner's decision, and an alert on failures should not fire for it.
    else if (status === 'cancelled') this.deps.events.emit('batch.cancelled', data, once);
  }
}
