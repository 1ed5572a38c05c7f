/**
 * Enum lists have one source (issue 28 item 4): combo strategies, account strategies, memory strategies,
 * combo affinities, event names and batch statuses live in src/shared, and the daemon's schemas, the CLI's help and the
 * dashboard's selects take them from there. This walks src/ and dashboard/src for a list spelled out again
 * (three members in a row, quoted or in a help sentence) outside src/shared.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { EVENT_NAMES } from '../../src/shared/event-names.js';
import { ACCOUNT_STRATEGIES, BATCH_STATUSES, COMBO_STRATEGIES, MEMORY_STRATEGIES } from '../../src/shared/records.js';
import { REPO_ROOT } from '../support/cli.js';

/** [list, members in a row that make a copy]: a few events in a row is a choice of some (boot.ts subscribes four), not the list. */
const LISTS: Record<string, [readonly string[], number]> = {
  COMBO_STRATEGIES: [COMBO_STRATEGIES, 3],
  ACCOUNT_STRATEGIES: [ACCOUNT_STRATEGIES, 3],
  MEMORY_STRATEGIES: [MEMORY_STRATEGIES, 3],
  EVENT_NAMES: [EVENT_NAMES, 5],
  BATCH_STATUSES: [BATCH_STATUSES, 4],
};

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sourceFiles(join(dir, e.name)) : /\.tsx?$/.test(e.name) && !e.name.endsWith('.gen.ts') ? [join(dir, e.name)] : [],
  );
}

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** `run` members in a row: quoted and comma-separated (a literal array), or a help sentence (`a (default), b or c`). */
function copies(list: readonly string[], run = 3): RegExp[] {
  const out: RegExp[] = [];
  for (let i = 0; i + run <= list.length; i++) {
    const part = list.slice(i, i + run).map(escape);
    out.push(new RegExp(part.map((m) => `['"\`]${m}['"\`]`).join('\\s*,\\s*')));
    out.push(new RegExp(`\\b${part.slice(0, -1).map((m) => `${m}(?: \\(default\\))?`).join(', ')},? (?:or )?${part.at(-1)}\\b`));
  }
  return out;
}

describe('shared enum lists', () => {
  const files = [...sourceFiles(join(REPO_ROOT, 'src')), ...sourceFiles(join(REPO_ROOT, 'dashboard', 'src'))].filter(
    (f) => !relative(REPO_ROOT, f).startsWith(join('src', 'shared')),
  );

  for (const [name, [list, run]] of Object.entries(LISTS)) {
    it(`${name} is spelled out only in src/shared`, () => {
      const patterns = copies(list, run);
      const found = files.filter((f) => {
        const text = readFileSync(f, 'utf8');
        return patterns.some((re) => re.test(text));
      });
      expect(found.map((f) => relative(REPO_ROOT, f))).toEqual([]);
    });
  }

  it('the check sees a copy (a check of the checker)', () => {
    expect(copies(COMBO_STRATEGIES).some((re) => re.test("const S = ['priority', 'weighted', 'round-robin'];"))).toBe(true);
    expect(copies(COMBO_STRATEGIES).some((re) => re.test("'priority (default), weighted, round-robin, random'"))).toBe(true);
    expect(copies(MEMORY_STRATEGIES).some((re) => re.test("'retrieval: exact, semantic or hybrid'"))).toBe(true);
  });
});
