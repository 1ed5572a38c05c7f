import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

/**
 * Sorts the test files into vitest's two projects (see vitest.config.ts and docs/testing.md):
 * - `process`: files that start other processes (the built daemon, the CLI, a child node, Chromium), directly
 *   or through a helper under test/ they import. They wait on those processes more than they compute, so they
 *   run in forks, each file in a fresh process.
 * - `unit`: everything else (in-process code, loopback mock servers, in-process daemons). These share worker
 *   threads and their module cache (isolate: false), which saves importing the daemon's sources per file.
 * A file that changes state a shared module cache would carry to the next file (environment read at import
 * time, module-level registries it does not restore) says so with the marker comment `@vitest-isolate`, and
 * runs with the `process` files.
 * The sort reads the files each run, so a new test file lands in the right project without a list to edit.
 */

/** What a file that starts a process contains (in itself or in a test/ helper it imports). */
const STARTS_PROCESS =
  /\bstartRouter\b|support\/router-daemon|support\/cli\.js|\bexeca\b|node:child_process|playwright-core|dist\/(daemon|cli)\//;
const ISOLATE_MARKER = '@vitest-isolate';
const TEST_FILE = /\.test\.tsx?$/;
const RELATIVE_IMPORT = /(?:from|import\()\s*'(\.{1,2}\/[^']+)'/g;

export interface TestProjects {
  unit: string[];
  process: string[];
}

export function sortTestFiles(root: string): TestProjects {
  const testDir = resolve(root, 'test');
  const memo = new Map<string, boolean>();

  /** Resolves a relative import of a test file to a file under test/ (imports of src/ are not followed). */
  const local = (from: string, spec: string): string | undefined => {
    const base = resolve(dirname(from), spec);
    if (!base.startsWith(testDir)) return undefined;
    for (const candidate of [base, base.replace(/\.js$/, '.ts'), base.replace(/\.js$/, '.tsx')]) {
      if (existsSync(candidate) && candidate !== dirname(candidate)) return candidate;
    }
    return undefined;
  };

  const needsProcess = (file: string, visiting: Set<string>): boolean => {
    const known = memo.get(file);
    if (known !== undefined) return known;
    if (visiting.has(file)) return false;
    visiting.add(file);
    const text = readFileSync(file, 'utf8');
    let result = STARTS_PROCESS.test(text);
    for (const match of result ? [] : text.matchAll(RELATIVE_IMPORT)) {
      const dep = local(file, match[1]!);
      if (dep && needsProcess(dep, visiting)) {
        result = true;
        break;
      }
    }
    memo.set(file, result);
    return result;
  };

  const projects: TestProjects = { unit: [], process: [] };
  const files = readdirSync(testDir, { recursive: true, encoding: 'utf8' })
    .filter((f) => TEST_FILE.test(f))
    .sort();
  for (const f of files) {
    const file = join(testDir, f);
    const path = relative(root, file).split('\\').join('/');
    const isolated = readFileSync(file, 'utf8').includes(ISOLATE_MARKER);
    (isolated || needsProcess(file, new Set()) ? projects.process : projects.unit).push(path);
  }
  return projects;
}
