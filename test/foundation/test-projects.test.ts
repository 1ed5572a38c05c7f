/**
 * The sort of test files into vitest's projects (test/support/projects.ts, docs/testing.md): every test file
 * of the repository is in exactly one project, and a new file lands by what it does, with no list to edit:
 * one that starts a process (itself or through a test/ helper, however deep) runs in `process`, one that
 * stays in-process in `unit`, and the `@vitest-isolate` marker moves a file to `process`.
 */
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { sortTestFiles } from '../support/projects.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const dirs: string[] = [];

afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function tree(files: Record<string, string>): string {
  const root = mkdtempSync(join(tmpdir(), 'router-projects-'));
  dirs.push(root);
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), text);
  }
  return root;
}

describe('test projects', () => {
  it('holds every test file of the repository exactly once', () => {
    const { unit, process } = sortTestFiles(ROOT);
    const all = readdirSync(join(ROOT, 'test'), { recursive: true, encoding: 'utf8' })
      .filter((f) => /\.test\.tsx?$/.test(f))
      .map((f) => `test/${f.split('\\').join('/')}`)
      .sort();
    expect([...unit, ...process].sort()).toEqual(all);
    expect(unit.filter((f) => process.includes(f))).toEqual([]);
    // Known members of each side, as a check that the sort is not one-sided.
    expect(process).toContain('test/foundation/cli-lifecycle.test.ts');
    expect(process).toContain('test/dashboard/browser.test.ts');
    expect(process).toContain('test/operations/backups.test.ts'); // through test/operations/helpers.ts
    expect(unit).toContain('test/translate/golden.test.ts');
  });

  it('sorts a new file by what it starts, through helpers, and by the isolate marker', () => {
    const root = tree({
      'test/support/router-daemon.ts': "import { execa } from 'execa';\nexport const startRouter = () => execa('node');\n",
      'test/area/helpers.ts': "export { startRouter } from '../support/router-daemon.js';\n",
      'test/area/deep.ts': "export * from './helpers.js';\n",
      'test/area/pure.ts': 'export const add = (a: number, b: number) => a + b;\n',
      'test/area/spawns.test.ts': "import { startRouter } from './deep.js';\n",
      'test/area/child.test.ts': "import { spawn } from 'node:child_process';\n",
      'test/area/browser.test.tsx': "import { chromium } from 'playwright-core';\n",
      'test/area/pure.test.ts': "import { add } from './pure.js';\nimport { x } from '../../src/daemon/boot.js';\n",
      'test/area/marked.test.ts': "// @vitest-isolate: sets an environment variable read at import time\nimport { add } from './pure.js';\n",
      'test/area/not-a-test.ts': "import { execa } from 'execa';\n",
    });
    expect(sortTestFiles(root)).toEqual({
      unit: ['test/area/pure.test.ts'],
      process: ['test/area/browser.test.tsx', 'test/area/child.test.ts', 'test/area/marked.test.ts', 'test/area/spawns.test.ts'],
    });
  });
});
