// Rendering: the results table (Markdown, readable on stdout and in docs/performance.md) and the docs update.
import { readFileSync, writeFileSync, existsSync } from 'node:fs';

export function fmt(x, digits = 2) {
  if (x === null || x === undefined || Number.isNaN(x)) return '-';
  if (typeof x === 'string') return x;
  if (Math.abs(x) >= 1000) return Math.round(x).toLocaleString('en-US');
  if (Math.abs(x) >= 100) return x.toFixed(0);
  if (Math.abs(x) >= 10) return x.toFixed(1);
  return x.toFixed(digits);
}

export function ratio(a, b) {
  if (typeof a !== 'number' || typeof b !== 'number' || b === 0) return null;
  return a / b;
}

const COLS = ['Scenario', 'Metric', 'Direct', 'Baseline', 'Router', 'Router / baseline', 'Target', 'Met'];

/** rows: {scenario, metric, direct, baseline, router, ratio, target, met} */
export function renderTable(rows) {
  const cells = rows.map((r) => [
    r.scenario,
    r.metric,
    fmt(r.direct),
    fmt(r.baseline),
    fmt(r.router),
    r.ratio === undefined || r.ratio === null ? '' : `${fmt(r.ratio)}x`,
    r.target ?? '',
    r.met === undefined ? '' : r.met ? 'yes' : '**NO**',
  ]);
  const widths = COLS.map((c, i) => Math.max(c.length, ...cells.map((row) => String(row[i]).length)));
  const line = (row) => `| ${row.map((c, i) => String(c).padEnd(widths[i])).join(' | ')} |`;
  return [line(COLS), `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`, ...cells.map(line)].join('\n');
}

/** Replaces the block between the bench markers in docs/performance.md with the latest table. */
export function updateDocs(file, block) {
  const START = '<!-- bench:latest:start -->';
  const END = '<!-- bench:latest:end -->';
  if (!existsSync(file)) return false;
  const text = readFileSync(file, 'utf8');
  const i = text.indexOf(START);
  const j = text.indexOf(END);
  if (i < 0 || j < i) return false;
  writeFileSync(file, `${text.slice(0, i + START.length)}\n${block}\n${text.slice(j)}`);
  return true;
}
