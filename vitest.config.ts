import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';
import { sortTestFiles } from './test/support/projects.js';

const root = fileURLToPath(new URL('.', import.meta.url));
const files = sortTestFiles(root);

/**
 * Two projects (docs/testing.md): `unit` (in-process) shares worker threads and their module cache;
 * `process` (starts the daemon, the CLI or Chromium) runs each file in a fresh fork. Files are sorted
 * by test/support/projects.ts when the run starts, so a new test file needs no entry here.
 * Workers: the `process` files spend most of their time waiting on the processes they start, so two
 * files per core keep the cores busy; vitest's default (one per core, minus one) runs a 2-core machine
 * one file at a time. `ROUTER_TEST_WORKERS=N` (e.g. for `npm test`) or `--maxWorkers N` sets another count
 * (the projects would keep this file's value over the command line's, so it is left unset then).
 */
const fromCli = process.argv.some((a) => /^--max-?workers\b/i.test(a));
const workers = fromCli ? undefined : Number(process.env.ROUTER_TEST_WORKERS) || Math.max(2, availableParallelism() * 2);

export default defineConfig({
  test: {
    reporters: ['default', './test/support/summary-reporter.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // expect.poll waits up to 10 s (vitest's default, 1 s, is too short on a loaded machine); it returns as
    // soon as the condition holds, so only a failing poll takes longer.
    expect: { poll: { timeout: 10_000 } },
    maxWorkers: workers,
    projects: [
      {
        extends: true,
        test: {
          name: 'unit',
          include: files.unit,
          pool: 'threads',
          isolate: false,
        },
      },
      {
        extends: true,
        test: {
          name: 'process',
          include: files.process,
          pool: 'forks',
          // A daemon start costs about a second of CPU: on a loaded machine a test that starts two of them
          // needs more than the 30 s an in-process test gets. Tests set longer limits where they need them.
          testTimeout: 60_000,
          hookTimeout: 60_000,
        },
      },
    ],
  },
});
