import type { Reporter, TestModule } from 'vitest/node';

/**
 * Ends every run with one plain line, `N passed, N failed`, that CI and people can grep. When tests were
 * skipped (a suite whose tool is missing on this machine, e.g. the browser tests without Chromium), a
 * second line says how many and in which files, so a missing tool never passes silently. A file whose
 * hook failed (its tests never ran) counts as one failure.
 */
export default class SummaryReporter implements Reporter {
  onTestRunEnd(testModules: ReadonlyArray<TestModule>): void {
    let passed = 0;
    let failed = 0;
    let skipped = 0;
    const skippedFiles = new Set<string>();
    for (const mod of testModules) {
      let failedHere = 0;
      for (const test of mod.children.allTests()) {
        const state = test.result().state;
        if (state === 'passed') passed++;
        else if (state === 'failed') failedHere++;
        else if (state === 'skipped' && test.options.mode === 'skip') {
          skipped++;
          skippedFiles.add(mod.relativeModuleId);
        }
      }
      // A file that failed with no failed test (it did not load, or a beforeAll/afterAll hook failed and
      // its tests never ran) counts as one failure: its tests are not passes.
      if (mod.state() === 'failed' && failedHere === 0) failedHere = 1;
      failed += failedHere;
    }
    process.stdout.write(`\n${passed} passed, ${failed} failed\n`);
    if (skipped) process.stdout.write(`${skipped} skipped (${[...skippedFiles].sort().join(', ')})\n`);
  }
}
