import type { IncomingMessage, ServerResponse } from 'node:http';

/** Client routes whose requests are proxied upstream. */
const PROXY_PATH_RE = /^\/(?:v1\/|v1beta\/|api\/v1\/relay\/)/;

interface Entry {
  start: number;
  res: ServerResponse;
}

/**
 * Proxied HTTP requests in flight, seen from the listener (attached in main.ts): O(1) per request. The
 * live status reads the counts; the usage recorder asks for the start of the oldest request still open to
 * learn when a failed attempt can no longer be followed by another attempt of the same request.
 */
export class InflightTracker {
  /** Insertion order is start order, so the first entry is the oldest. */
  private readonly open = new Set<Entry>();
  /** Called when a tracked request ends (response finished or connection closed). */
  onSettled?: () => void;
  /** Called when a proxied request starts, with its response (durable replies wrap its end). */
  onTrack?: (res: ServerResponse) => void;
  /** True once wired to a listener (main.ts); in-process use has no tracker. */
  attached = false;

  /** Listener for the HTTP server's `request` event. */
  track(req: IncomingMessage, res: ServerResponse): void {
    if (!PROXY_PATH_RE.test(req.url ?? '')) return;
    const entry: Entry = { start: performance.now(), res };
    this.open.add(entry);
    this.onTrack?.(res);
    res.once('close', () => {
      this.open.delete(entry);
      this.onSettled?.();
    });
  }

  /** performance.now() at the start of the oldest proxied request still open, or undefined. */
  oldestStart(): number | undefined {
    for (const e of this.open) return e.start;
    return undefined;
  }

  /** Proxied requests in flight. */
  get count(): number {
    return this.open.size;
  }

  /** Proxied replies in progress: headers sent, body still flowing (streams, in practice). */
  openStreams(): number {
    let n = 0;
    for (const e of this.open) if (e.res.headersSent && !e.res.writableEnded) n++;
    return n;
  }
}
