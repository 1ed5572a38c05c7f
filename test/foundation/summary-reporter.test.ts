/**
 * The last line of `npm test` (test/support/summary-reporter.ts) counts what happened, read from a real
 * vitest run of a few small files in a temp folder: passes, failures, a file whose beforeAll failed (its
 * tests never ran: one failure, not zero), a file that does not load, and skipped tests named with their file.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { execa } from 'execa';
import { afterAll, describe, expect, it } from 'vitest';

const VITEST = fileURLToPath(new URL('../../node_modules/vitest/vitest.mjs', import.meta.url));
const REPORTER = fileURLToPath(new URL('../support/summary-reporter.ts', import.meta.url));
const dirs: string[] = [];

afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** Runs vitest (globals on, no config file there) on `files` in a temp folder; returns the lines the reporter wrote. */
async function summaryOf(files: Record<string, string>): Promise<string[]> {
  const dir = mkdtempSync(join(tmpdir(), 'router-summary-'));
  dirs.push(dir);
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  const r = await execa(process.execPath, [VITEST, 'run', '--root', dir, '--globals', '--reporter', REPORTER], {
    reject: false,
    cwd: dir,
    env: { CI: '1' },
  });
  expect(r.exitCode, r.stderr).not.toBe(0);
  return r.stdout.trimEnd().split('\n').slice(-2);
}

describe('the summary line of a test run', () => {
  it('counts a file whose beforeAll failed, and a file that does not load, as failures', async () => {
    const lines = await summaryOf({
      'ok.test.js': "it('passes', () => {});\nit('passes too', () => {});\n",
      'bad.test.js': "it('fails', () => { throw new Error('no'); });\n",
      'hook.test.js': "beforeAll(() => { throw new Error('setup failed'); });\nit('never runs', () => {});\nit('never runs either', () => {});\n",
      'broken.test.js': "import './missing-module.js';\nit('never collected', () => {});\n",
      'skip.test.js': "it.skip('skipped on purpose', () => {});\nit('passes', () => {});\n",
    });
    expect(lines).toEqual(['3 passed, 3 failed', '1 skipped (skip.test.js)']);
  }, 60_000);
});
