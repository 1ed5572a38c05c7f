/**
 * The daemon is composed once, in dependency order, in boot.ts: every service takes what it uses in its
 * constructor. None is handed the whole Services bag after it was built (a two-phase `start(services)`),
 * and none keeps a Services field it fills in later. A walk over the syntax of src/daemon checks it.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../support/cli.js';

const DAEMON = join(REPO_ROOT, 'src', 'daemon');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sourceFiles(join(dir, e.name)) : /\.tsx?$/.test(e.name) ? [join(dir, e.name)] : [],
  );
}

/** Whether a type names the Services bag (`Services`, `Services | undefined`, `Pick<Services, ...>` is not the bag). */
function isBag(type: ts.TypeNode | undefined): boolean {
  if (!type) return false;
  if (ts.isUnionTypeNode(type)) return type.types.some(isBag);
  return ts.isTypeReferenceNode(type) && type.typeName.getText() === 'Services';
}

/** Late wiring in one file's text: methods taking the bag after construction, and bag fields filled in later. */
export function lateWiring(name: string, text: string): string[] {
  const source = ts.createSourceFile(name, text, ts.ScriptTarget.Latest, true);
  const found: string[] = [];
  const visit = (node: ts.Node) => {
    if (ts.isMethodDeclaration(node) && node.parameters.some((p) => isBag(p.type))) {
      found.push(`${name}: method ${node.name.getText()}(${node.parameters.map((p) => p.getText()).join(', ')}) takes the Services bag after construction`);
    }
    if (ts.isPropertyDeclaration(node) && isBag(node.type) && (node.exclamationToken || node.questionToken || !node.initializer)) {
      found.push(`${name}: field ${node.name.getText()} holds the Services bag, filled in after construction`);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

describe('composition', () => {
  it('no service takes the Services bag after it was built (no two-phase start)', () => {
    const found = sourceFiles(DAEMON).flatMap((file) => lateWiring(relative(DAEMON, file).split(sep).join('/'), readFileSync(file, 'utf8')));
    expect(found).toEqual([]);
  });

  it('the check sees a two-phase start and a late field (a check of the checker)', () => {
    const old = `class Memory {
      private services?: Services;
      private other!: Services | undefined;
      start(services: Services): void { this.services = services; }
      run(pipeline: Pick<Services, 'log'>): void {}
    }`;
    expect(lateWiring('memory.ts', old)).toEqual([
      'memory.ts: field services holds the Services bag, filled in after construction',
      'memory.ts: field other holds the Services bag, filled in after construction',
      'memory.ts: method start(services: Services) takes the Services bag after construction',
    ]);
    expect(lateWiring('ok.ts', 'class Ok { constructor(private readonly deps: PipelineDeps) {} start(): void {} }')).toEqual([]);
  });
});
