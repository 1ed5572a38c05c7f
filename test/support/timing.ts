import { readFileSync } from 'node:fs';

/**
 * CPU time this thread spent in `work`, in ms: the least of `runs` runs. A check of CPU cost ("100k emits
 * well under a second") reads this instead of wall time, which a loaded machine stretches at will: the
 * thread's own CPU time (Linux: /proc/thread-self/stat, 10 ms steps) does not grow when other processes
 * take the cores. Elsewhere it falls back to the fastest wall time of the runs. `work` must be repeatable
 * (build its own state on each call).
 */
export async function cpuTimeOf(work: () => unknown, runs = 3): Promise<number> {
  const clock = threadCpuMs() === undefined ? () => performance.now() : () => threadCpuMs()!;
  let best = Number.POSITIVE_INFINITY;
  for (let i = 0; i < runs; i++) {
    const started = clock();
    await work();
    best = Math.min(best, clock() - started);
  }
  return best;
}

/** utime + stime of the calling thread in ms (the kernel counts in 1/100 s), or undefined off Linux. */
function threadCpuMs(): number | undefined {
  let stat: string;
  try {
    stat = readFileSync('/proc/thread-self/stat', 'utf8');
  } catch {
    return undefined;
  }
  // Fields after the command name (which may hold spaces): state is field 3, utime 14, stime 15.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
}
