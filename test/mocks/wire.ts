import type { ServerResponse } from 'node:http';

/** How frames go onto the socket; set by the `slow-stream` and `drop-mid-stream` wrappers. */
export interface Transport {
  intervalMs: number;
  /** Destroy the socket once this many frames are flushed. */
  dropAfter?: number;
  /** Stop sending once this many frames are flushed, keeping the socket open (until the client leaves). */
  stallAfter?: number;
}

/** Resolves true after `ms`, or false as soon as `signal` aborts, so no timer outlives its response. */
export function sleep(ms: number, signal: AbortSignal): Promise<boolean> {
  if (signal.aborted) return Promise.resolve(false);
  return new Promise((resolve) => {
    const done = (ok: boolean) => {
      clearTimeout(timer);
      signal.removeEventListener('abort', onAbort);
      resolve(ok);
    };
    const onAbort = () => done(false);
    const timer = setTimeout(() => done(true), ms);
    signal.addEventListener('abort', onAbort);
  });
}

/** Writes one chunk and waits until it is flushed, so each frame leaves as its own write. */
function flush(res: ServerResponse, chunk: string | Buffer): Promise<boolean> {
  return new Promise((resolve) => {
    if (res.destroyed || res.writableEnded) return resolve(false);
    res.write(chunk, (err) => resolve(!err));
  });
}

/**
 * Sends frames one write at a time, honouring the transport. Ends the response normally unless the
 * transport says to drop, in which case the socket is destroyed without a terminating chunk.
 */
export async function writeFrames(
  res: ServerResponse,
  frames: (string | Buffer)[],
  t: Transport,
  signal: AbortSignal,
): Promise<void> {
  for (let i = 0; i < frames.length; i++) {
    if (t.dropAfter !== undefined && i >= t.dropAfter) break;
    if (t.stallAfter !== undefined && i >= t.stallAfter) {
      await new Promise<void>((resolve) => (signal.aborted ? resolve() : signal.addEventListener('abort', () => resolve(), { once: true })));
      return;
    }
    if (i > 0 && t.intervalMs > 0 && !(await sleep(t.intervalMs, signal))) return;
    if (!(await flush(res, frames[i]!))) return;
  }
  if (t.dropAfter !== undefined && t.dropAfter < frames.length) {
    res.socket?.destroy();
    return;
  }
  res.end();
}

/** Splits an SSE body into its events, each keeping its trailing blank line. */
export function sseEvents(body: string): string[] {
  const out = body.match(/[\s\S]*?(?:\r\n\r\n|\n\n|\r\r|$)/g) ?? [];
  return out.filter((s) => s.length > 0);
}

/** Splits bytes into fixed-size pieces; with a small size this cuts UTF-8 sequences across writes. */
export function byteChunks(body: string, size: number): Buffer[] {
  const buf = Buffer.from(body, 'utf8');
  const out: Buffer[] = [];
  for (let i = 0; i < buf.length; i += size) out.push(buf.subarray(i, i + size));
  return out;
}
