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

const parsed = new Map<string, string[]>();

/** Every module a file imports, as a path relative to src/ (relative specifiers only; packages are skipped). */
export function importsOf(file: string): string[] {
  let found = parsed.get(file);
  if (!found) parsed.set(file, (found = parse(file)));
  return found;
}

function parse(file: string): string[] {
  const info = ts.preProcessFile(readFileSync(file, 'utf8'), true, true);
  return info.importedFiles
    .map((f) => f.fileName)
    .filter((spec) => spec.startsWith('.'))
    .map((spec) => relative(SRC, resolve(dirname(file), spec)).split(sep).join('/'));
}

/** Whether `target` (a path relative to src/) is `layer` or lies under it (`daemon/routes.js` is the file `daemon/routes.ts`). */
function within(target: string, layer: string): boolean {
  return target === layer || target === `${layer}.js` || target.startsWith(`${layer}/`);
}

/** [files under this folder, may not import anything under these folders]. */
const FORBIDDEN: Array<[string, string[]]> = [
  ['cli', ['daemon']],
  // Routing and resilience decide from their own types; the proxy acts on their decisions.
  ['daemon/routing', ['daemon/proxy']],
  ['daemon/resilience', ['daemon/proxy']],
  // Providers build Targets (providers/target.ts) and combos name them; the proxy sends to them, never the reverse.
  ['daemon/combos', ['daemon/proxy']],
  ['daemon/providers', ['daemon/proxy']],
  // The outbound client (net/upstream.ts) and token refresh sit under the proxy: they serve it and everyone else.
  ['daemon/net', ['daemon/proxy']],
  ['daemon/oauth', ['daemon/proxy']],
  // The HTTP layer (app, route table helpers, errors, guards) runs any route; it knows no proxy internals.
  ['daemon/http', ['daemon/proxy']],
  // Endpoint-family codecs are pure like translate/: the proxy's family runner sends, records and answers.
  ['daemon/families', ['daemon/http', 'daemon/store', 'daemon/proxy', 'daemon/routing', 'daemon/resilience', 'daemon/usage/service.js']],
];

/** The agent features: they call the pipeline like a client does (internal-call.ts) and sit on top of it. */
const AGENTS = ['a2a', 'agents', 'batches', 'copilot', 'evals', 'mcp', 'memory', 'playground', 'skills', 'vault'].map((f) => `daemon/${f}`);
/** The request pipeline and everything it stands on: none of it may reach up into an agent feature. */
const CORE = ['auth', 'combos', 'http', 'keys', 'net', 'oauth', 'providers', 'proxy', 'resilience', 'routing', 'store', 'translate'].map((f) => `daemon/${f}`);

/** [files under this folder, may import only these folders (and their own)]: the bottom layers. */
const ONLY: Array<[string, string[]]> = [
  // The wire vocabulary both sides read depends on nothing.
  ['shared', []],
  // Codecs are pure: formats in, formats out.
  ['daemon/translate', ['shared']],
  // The database and its migrations serve every feature and import none.
  ['daemon/store', ['shared']],
  // The event bus carries the shared event names; publishers and subscribers sit above it.
  ['daemon/events', ['shared']],
  // The settings store knows no feature: features declare their sections (settings/registry.ts), which
  // src/daemon/settings-sections.ts registers.
  ['daemon/settings', ['shared', 'daemon/store', 'daemon/http']],
];

/** [file, the only files that may import it]: the composition root (entry -> main -> boot -> route table) is imported by nothing else. */
const ROOT: Array<[string, string[]]> = [
  ['daemon/main', ['daemon/entry.ts']],
  ['daemon/boot', ['daemon/main.ts']],
  ['daemon/routes', ['daemon/boot.ts']],
];

function violationsOf(from: string, bad: (target: string) => boolean): string[] {
  const out: string[] = [];
  for (const file of sourceFiles(join(SRC, from))) {
    for (const target of importsOf(file)) if (bad(target)) out.push(`${relative(SRC, file).split(sep).join('/')} -> ${target}`);
  }
  return out;
}

describe('layers', () => {
  for (const [from, forbidden] of FORBIDDEN) {
    it(`nothing under src/${from} imports src/${forbidden.join(' or src/')}`, () => {
      expect(violationsOf(from, (t) => forbidden.some((f) => within(t, f)))).toEqual([]);
    });
  }

  for (const from of CORE) {
    it(`nothing under src/${from} imports an agent feature`, () => {
      expect(violationsOf(from, (t) => AGENTS.some((a) => within(t, a)))).toEqual([]);
    });
  }

  for (const [from, allowed] of ONLY) {
    it(`src/${from} imports ${allowed.length ? `only src/${allowed.join(', src/')} and itself` : 'nothing outside itself'}`, () => {
      expect(violationsOf(from, (t) => !within(t, from) && !allowed.some((a) => within(t, a)))).toEqual([]);
    });
  }

  for (const [root, importers] of ROOT) {
    it(`only ${importers.map((f) => `src/${f}`).join(', ')} imports src/${root}.ts`, () => {
      const found = violationsOf('.', (t) => t === `${root}.js`).map((v) => v.split(' -> ')[0]!);
      expect(found.filter((f) => !importers.includes(f))).toEqual([]);
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
    // a file of the composition root is seen as `<name>.js` and matched by its layer name
    expect(importsOf(join(SRC, 'daemon', 'boot.ts'))).toContain('daemon/routes.js');
    expect(within('daemon/routes.js', 'daemon/routes')).toBe(true);
    expect(within('daemon/routes-extra.js', 'daemon/routes')).toBe(false);
    expect(within('daemon/proxy/target.js', 'daemon/proxy')).toBe(true);
    expect(within('daemon/proxy-old/x.js', 'daemon/proxy')).toBe(false);
  });
});
