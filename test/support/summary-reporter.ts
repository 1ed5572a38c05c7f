import type { Reporter, TestModule } from 'vitest/node';

/**
 * Ends every run with one plain line, `N passed, N failed`, that CI and people can grep. When tests were
 * skipped (a suite whose tool is missing on this machine, e.g. the browser tests without Chromium), a
 * second line says how many and in which files, so a missing tool never passes silently.
 */
export default class SummaryReporter implements Reporter {
  onTestRunEnd(testModules: ReadonlyArray<TestModule>): void {
    let passed = 0;
    let failed = 0;
    let skipped = 0;
    const skippedFiles = new Set<string>();
    for (const mod of testModules) {
      for (const test of mod.children.allTests()) {
        const state = test.result().state;
        if (state === 'passed') passed++;
        else if (state === 'failed') failed++;
        else if (state === 'skipped' && test.options.mode === 'skip') {
          skipped++;
          skippedFiles.add(mod.relativeModuleId);
        }
      }
      if (mod.state() === 'failed' && mod.children.size === 0) failed++;
    }
    process.stdout.write(`\n${passed} passed, ${failed} failed\n`);
    if (skipped) process.stdout.write(`${skipped} skipped (${[...skippedFiles].sort().join(', ')})\n`);
  }
}
