import { readdirSync } from 'node:fs';
import { monitorEventLoopDelay, type IntervalHistogram } from 'node:perf_hooks';

/** The daemon process as telemetry reports it (`process` of GET /api/telemetry/summary). */
export interface ProcessStats {
  rssBytes: number;
  heapUsedBytes: number;
  heapTotalBytes: number;
  externalBytes: number;
  /** Open file descriptors (Linux: entries of /proc/self/fd); null where that cannot be read. */
  openFds: number | null;
  /**
   * Event-loop delay since the previous read (or since the first, which starts the monitor), ms; null on
   * the first read.
   */
  eventLoopDelayMs: { p50: number; p99: number; max: number; sinceMs: number } | null;
}

let histogram: IntervalHistogram | undefined;
let since = 0;

function openFds(): number | null {
  try {
    return readdirSync('/proc/self/fd').length;
  } catch {
    return null;
  }
}

const ms = (ns: number) => Math.round(ns / 1e4) / 100;

/**
 * Memory, descriptors and event-loop delay of this process. The delay monitor (a 20 ms libuv timer)
 * starts on the first call, so a daemon nobody asks costs nothing; each call reports the delay since the
 * previous one and starts a new window.
 */
export function processStats(): ProcessStats {
  const mem = process.memoryUsage();
  let delay: ProcessStats['eventLoopDelayMs'] = null;
  const now = performance.now();
  if (!histogram) {
    histogram = monitorEventLoopDelay({ resolution: 20 });
    histogram.enable();
  } else if (histogram.count > 0) {
    delay = { p50: ms(histogram.percentile(50)), p99: ms(histogram.percentile(99)), max: ms(histogram.max), sinceMs: Math.round(now - since) };
    histogram.reset();
  }
  since = now;
  return {
    rssBytes: mem.rss,
    heapUsedBytes: mem.heapUsed,
    heapTotalBytes: mem.heapTotal,
    externalBytes: mem.external,
    openFds: openFds(),
    eventLoopDelayMs: delay,
  };
}
