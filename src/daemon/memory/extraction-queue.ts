/**
 * The extraction queue: exchanges waiting to have memories extracted from them, worked one at a time off
 * the request path (the first job waits a turn of the event loop, so the reply that queued it goes first).
 * Bounded: past `max` waiting jobs the oldest is dropped (extraction is best effort; memory use is not).
 */

/** One finished exchange to extract memories from. */
export interface ExtractionJob {
  apiKeyId: string;
  sessionId: string | null;
  userText: string;
  assistantText: string;
  traceId: string;
  model: string;
}

export class ExtractionQueue {
  private readonly jobs: ExtractionJob[] = [];
  private running?: Promise<void>;
  private closed = false;

  constructor(
    private readonly work: (job: ExtractionJob) => Promise<void>,
    private readonly onError: (err: unknown) => void,
    private readonly max = 100,
  ) {}

  push(job: ExtractionJob): void {
    if (this.closed) return;
    if (this.jobs.length >= this.max) this.jobs.shift();
    this.jobs.push(job);
    this.running ??= this.drain().finally(() => {
      this.running = undefined;
    });
  }

  /** The worker in flight, if any (resolves when the queue is empty). */
  get busy(): Promise<void> | undefined {
    return this.running;
  }

  /** Drops waiting jobs and takes no more; the job in progress finishes. */
  close(): void {
    this.closed = true;
    this.jobs.length = 0;
  }

  private async drain(): Promise<void> {
    await new Promise((r) => setImmediate(r));
    while (this.jobs.length && !this.closed) {
      const next = this.jobs.shift()!;
      try {
        await this.work(next);
      } catch (err) {
        this.onError(err);
      }
    }
  }
}
