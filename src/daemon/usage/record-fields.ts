/** Small helpers of UsageService that shape a record's fields (kept apart: service.ts is at its size limit). */
import { sanitizeHeaderValue } from './sanitize.js';

/** Stage notes as stored: JSON, at most 2000 characters, null when there are none. */
export function notesJson(notes: Record<string, unknown> | undefined): string | null {
  if (!notes || !hasOwnKeys(notes)) return null;
  try {
    const text = JSON.stringify(notes);
    return text.length > 2000 ? `${text.slice(0, 1997)}...` : text;
  } catch {
    return null;
  }
}

function hasOwnKeys(o: Record<string, unknown>): boolean {
  for (const k in o) if (Object.hasOwn(o, k)) return true;
  return false;
}

/**
 * The served model as the row keeps it: the name the reply gave when it differs from the model asked (a
 * dated snapshot too: the row says which one answered), null when it is the same or the reply named none.
 */
export function servedName(served: string | undefined, asked: string): string | null {
  if (!served || served === asked) return null;
  return sanitizeHeaderValue(served, 200);
}

export function noop(): void {}

/** Settles when an estimation job's row is queued. */
export interface QueuedSignal {
  promise: Promise<void>;
  resolve: () => void;
}

/** A promise that settles when an estimation job's row is queued (made on first use). */
export function queuedPromise(job: { queued?: QueuedSignal }): Promise<void> {
  if (!job.queued) {
    let resolve!: () => void;
    const promise = new Promise<void>((r) => (resolve = r));
    job.queued = { promise, resolve };
  }
  return job.queued.promise;
}

export function count(n: number | undefined): number {
  return typeof n === 'number' && Number.isFinite(n) && n > 0 ? Math.round(n) : 0;
}

export function round2(n: number): number {
  return Math.round(n * 100) / 100;
}
