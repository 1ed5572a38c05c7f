import type { AuthInfo } from '../auth/pipeline.js';
import { badRequest, RouterError } from '../http/errors.js';
import type { Services } from '../services.js';
import type { Db } from '../store/db.js';
import type { BatchFinishedData } from '../events/types.js';
import { FileService } from './files.js';
import { BATCH_ENDPOINTS, readBatchLines, type BatchLine } from './jsonl.js';
import { ownerAuth } from './line-call.js';
import { nativePlan, runNative } from './native.js';
import { Limiter, RunHandle, runLocal } from './runner.js';
import { BatchStore, FINAL_STATUSES, newId, nowSeconds, type BatchRow, type BatchStatus } from './store.js';

/**
 * The Batch API's state machine (docs/batch.md): create (validating) -> in_progress -> finalizing ->
 * completed, or failed / expired / cancelling -> cancelled. Runs each batch locally through the executor
 * or, in native mode, as a provider batch; picks unfinished batches up again at start.
 */

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
  readonly store: BatchStore;
  readonly files: FileService;
  private readonly limiter: Limiter;
  private readonly running = new Map<string, { handle: RunHandle; done: Promise<void> }>();
  private services?: Services;
  private closed = false;
  private readonly hourMs = windowHourMs();
  private sweeper?: NodeJS.Timeout;

  constructor(db: Db, home: string, concurrency: () => number) {
    this.store = new BatchStore(db);
    this.files = new FileService(this.store, home);
    this.limiter = new Limiter(concurrency);
  }

  /** Starts the service once every other service exists: resumes the batches a stop left unfinished. */
  start(services: Services): void {
    this.services = services;
    for (const row of this.store.unfinished()) this.launch(row);
    // Expired files go at start and every few minutes (and before any lookup: files.ts).
    this.files.sweep();
    this.sweeper = setInterval(() => this.files.sweep(), FILE_SWEEP_MS);
    this.sweeper.unref();
  }

  /**
   * A graceful stop's first step: no batch sends another line, and the lines in flight finish and are
   * recorded, so the next start does not send them again. Resolves when every run has ended, or after
   * `graceMs` (lines still in flight then are not recorded and are sent again at the next start).
   */
  async drain(graceMs: number): Promise<void> {
    const runs = [...this.running.values()];
    for (const { handle } of runs) handle.halt('shutdown');
    let timer: NodeJS.Timeout | undefined;
    const grace = new Promise<void>((resolve) => (timer = setTimeout(resolve, graceMs)));
    await Promise.race([Promise.all(runs.map((r) => r.done)), grace]);
    clearTimeout(timer);
  }

  /** Stops every running batch; lines still in flight are not recorded, so they are sent again at the next start. */
  close(): void {
    this.closed = true;
    clearInterval(this.sweeper);
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
  get(id: string, keyId: string | undefined): BatchRow {
    const row = this.store.batch(id);
    if (!row || (keyId !== undefined && row.key_id !== keyId)) throw new RouterError(404, `No such Batch object: ${id.slice(0, 100)}`);
    return row;
  }

  /** Checks a new batch against its input file and starts it. */
  async create(services: Services, auth: AuthInfo, body: CreateBatch): Promise<BatchRow> {
    if (!BATCH_ENDPOINTS.includes(body.endpoint)) throw badRequest(`Endpoint '${body.endpoint.slice(0, 100)}' is not supported; use one of ${BATCH_ENDPOINTS.join(', ')}.`, 'endpoint');
    const window = WINDOW_RE.exec(body.completion_window);
    if (!window || Number(window[1]) < 1 || Number(window[1]) > 168) throw badRequest("completion_window must be '24h' (or another whole number of hours up to 168h).", 'completion_window');
    const keyId = ownerOf(auth) ?? null;
    // The owner must be allowed to call the endpoint its lines name (path: scopes), now and when they run.
    ownerAuth(services, keyId, body.endpoint);
    const file = this.files.get(body.input_file_id, ownerOf(auth));
    if (file.purpose !== 'batch') throw badRequest(`File ${file.id} has purpose '${file.purpose}'; a batch needs a file uploaded with purpose 'batch'.`, 'input_file_id');
    const lines = readBatchLines(await this.files.readText(file.id));
    const wrong = lines.findIndex((l) => l.url !== body.endpoint);
    if (wrong !== -1) throw badRequest(`Line ${wrong + 1} of the file has url '${lines[wrong]!.url}', but the batch's endpoint is ${body.endpoint}.`, 'input_file_id');
    const mode = body.mode ?? 'local';
    let native: ReturnType<typeof nativePlan> | undefined;
    if (mode !== 'local') {
      native = nativePlan(services, body.endpoint, lines);
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
    this.store.addBatch(row);
    this.launch(row, lines);
    return row;
  }

  /** Asks a batch to stop: lines in flight finish, the rest are not sent; it ends `cancelled`. */
  cancel(row: BatchRow): BatchRow {
    if (FINAL_STATUSES.has(row.status) || row.status === 'cancelling') return row;
    this.store.setStatus(row.id, 'cancelling');
    const run = this.running.get(row.id);
    if (run) run.handle.halt('cancel');
    else this.launch(this.store.batch(row.id)!);
    return this.store.batch(row.id)!;
  }

  /** Deletes a finished batch and the output and error files it produced (its input file stays). */
  remove(row: BatchRow): void {
    if (!FINAL_STATUSES.has(row.status)) throw new RouterError(409, `Batch ${row.id} is ${row.status}; cancel it first.`);
    for (const id of [row.output_file_id, row.error_file_id]) if (id) this.files.remove(id);
    this.store.removeBatch(row.id);
  }

  /** True when an unfinished batch reads this file (it may not be deleted meanwhile). */
  fileInUse(fileId: string): boolean {
    return this.store.unfinished().some((b) => b.input_file_id === fileId);
  }

  private launch(row: BatchRow, lines?: BatchLine[]): void {
    const handle = new RunHandle();
    if (row.status === 'cancelling') handle.halt('cancel');
    // The completion window: lines not sent by then end `batch_expired` (native: the provider batch is cancelled).
    if (row.expires_at !== null) handle.expireAt(row.expires_at * 1000);
    const done = this.run(row, handle, lines)
      .catch((err: unknown) => {
        if (this.closed) return;
        this.services?.log.error('batch run failed', { batch: row.id, error: err instanceof Error ? err.message : String(err) });
        this.finish(row.id, 'failed', [{ code: 'internal_error', message: 'The batch stopped on an internal error; see the daemon log.' }]);
      })
      .finally(() => {
        handle.settle();
        this.running.delete(row.id);
      });
    this.running.set(row.id, { handle, done });
  }

  private async run(row: BatchRow, handle: RunHandle, given?: BatchLine[]): Promise<void> {
    const services = this.services!;
    let lines: BatchLine[];
    try {
      lines = given ?? readBatchLines(await this.files.readText(row.input_file_id));
    } catch {
      return this.finish(row.id, 'failed', [{ code: 'invalid_file', message: `The input file ${row.input_file_id} is gone or unreadable.` }]);
    }
    if (row.status === 'validating') this.store.setStatus(row.id, 'in_progress');
    const current = this.store.batch(row.id)!;
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
    const row = this.store.batch(id)!;
    if (status === 'completed') this.store.setStatus(id, 'finalizing');
    const output = await this.files.write(row.key_id, `${id}_output.jsonl`, this.store.results(id, true));
    const errorFile = await this.files.write(row.key_id, `${id}_error.jsonl`, this.store.results(id, false));
    if (this.closed) return;
    this.finish(id, status, errors, { output_file_id: output?.id ?? null, error_file_id: errorFile?.id ?? null });
  }

  private finish(id: string, status: BatchStatus, errors?: { code: string; message: string }[], extra: Partial<BatchRow> = {}): void {
    this.store.setStatus(id, status, { ...extra, ...(errors ? { errors: JSON.stringify(errors) } : {}) });
    const row = this.store.batch(id)!;
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
    if (status === 'completed') this.services?.events.emit('batch.completed', data);
    else if (status === 'failed' || status === 'expired') this.services?.events.emit('batch.failed', data);
    // Its own name, not batch.failed: a cancel is the owner's decision, and an alert on failures should not fire for it.
    else if (status === 'cancelled') this.services?.events.emit('batch.cancelled', data);
  }
}
