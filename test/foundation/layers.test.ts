/**
 * Layers point down: a small walk over the import graph of src/ (static imports, re-exports and dynamic
 * `import()`, type-only ones included) that fails when a file imports across a forbidden boundary.
 * The CLI talks to the daemon over HTTP only, so it never loads daemon code, not even for a type; the
 * shared vocabulary depends on neither side.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../support/cli.js';

const SRC = join(REPO_ROOT, 'src');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sourceFiles(join(dir, e.name)) : /\.tsx?$/.test(e.name) ? [join(dir, e.name)] : [],
  );
}

/** Every module a file imports, as a path relative to src/ (relative specifiers only; packages are skipped). */
export function importsOf(file: string): string[] {
  const info = ts.preProcessFile(readFileSync(file, 'utf8'), true, true);
  return info.importedFiles
    .map((f) => f.fileName)
    .filter((spec) => spec.startsWith('.'))
    .map((spec) => relative(SRC, resolve(dirname(file), spec)).split(sep).join('/'));
}

/** [files under this folder, may not import anything under these folders]. */
const RULES: Array<[string, string[]]> = [
  ['cli', ['daemon']],
  ['shared', ['daemon', 'cli']],
  // Codecs know formats, not HTTP, storage or the proxy: they raise CodecError and the HTTP layer maps it.
  ['daemon/translate', ['daemon/http', 'daemon/store', 'daemon/proxy']],
  // Routing and resilience decide from their own types; the proxy acts on their decisions.
  ['daemon/routing', ['daemon/proxy']],
  ['daemon/resilience', ['daemon/proxy']],
];

describe('layers', () => {
  for (const [from, forbidden] of RULES) {
    it(`nothing under src/${from} imports src/${forbidden.join(' or src/')}`, () => {
      const violations: string[] = [];
      for (const file of sourceFiles(join(SRC, from))) {
        for (const target of importsOf(file)) {
          if (forbidden.some((f) => target === f || target.startsWith(`${f}/`))) violations.push(`${relative(SRC, file)} -> ${target}`);
        }
      }
      expect(violations).toEqual([]);
    });
  }

  it('the walk sees every kind of import (a check of the checker)', () => {
    const file = join(SRC, 'cli', 'commands', 'start.ts');
    const imports = importsOf(file);
    expect(imports).toContain('shared/pidfile.js');
    // dynamic import() is seen too (the CLI loads its command groups that way)
    expect(importsOf(join(SRC, 'cli', 'index.ts'))).toContain('cli/commands/start.js');
    // type-only imports count: a codec's error type and resilience's own attempt types are seen
    expect(importsOf(join(SRC, 'daemon', 'translate', 'util', 'validate.ts'))).toContain('daemon/translate/errors.js');
    expect(importsOf(join(SRC, 'daemon', 'resilience', 'attempts.ts'))).toContain('daemon/routing/provider-error.js');
  });
});
