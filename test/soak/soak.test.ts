/**
 * The short soak in `npm test`: 30 s of mixed traffic and upstream faults against the real daemon (the
 * full run is `node bench/soak.mjs`, see docs/performance.md). Fails on a hung request, a completed request
 * without its usage row, or RSS / descriptor growth after warm-up.
 */
import { describe, expect, it } from 'vitest';
import { runSoak } from './run.js';

describe('soak (short)', () => {
  it('30 s of mixed traffic with faults: nothing hangs, every completed request has its row, no growth', async () => {
    const result = await runSoak({ durationMs: 30_000, warmupMs: 10_000, sampleEveryMs: 2_000, concurrency: 6 });
    console.log(result.table);
    expect(result.failures, result.table).toEqual([]);
    expect(result.counts.completed).toBeGreaterThan(300);
  }, 90_000);
});
