import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  anthropicRequests,
  anthropicResults,
  openaiInput,
  openaiResults,
  type NativeLine,
  type NativeResult,
} from '../../src/daemon/families/batch-native/codec.js';
import { deterministicOptions } from '../translate/golden-support.js';

/**
 * Golden cases of the native-batch codec (families/batch-native/codec.ts), from the providers' documented
 * formats: OpenAI's batch input and output/error files (platform.openai.com batch guide) and Anthropic's
 * Message Batches requests and results (docs.anthropic.com "Message Batches"). Each folder under
 * test/fixtures/families/batch-native/ holds `case.json` (what to map), the provider's files, and
 * `expected.json`. ROUTER_UPDATE_GOLDEN=1 writes expected.json from the codec (review the diff).
 */

const DIR = join(import.meta.dirname, '../fixtures/families/batch-native');
const cases = readdirSync(DIR, { withFileTypes: true })
  .filter((d) => d.isDirectory())
  .map((d) => d.name)
  .sort();

interface Case {
  kind: 'openai-input' | 'openai-results' | 'anthropic-requests' | 'anthropic-results';
  lines: string;
  upstreamModel?: string;
  expired?: boolean;
  files?: string[];
}

const read = (...p: string[]) => readFileSync(join(DIR, ...p), 'utf8');
const linesOf = (file: string): NativeLine[] =>
  read(file)
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as NativeLine);

/** Result maps as plain JSON, each output line parsed, in custom_id order. */
function plain(results: Map<string, NativeResult>) {
  return [...results.entries()].sort(([a], [b]) => a.localeCompare(b)).map(([customId, r]) => ({ customId, ok: r.ok, status: r.status, line: JSON.parse(r.result), body: r.body ?? null }));
}

function run(name: string): unknown {
  const c = JSON.parse(read(name, 'case.json')) as Case;
  const lines = linesOf(c.lines);
  let n = 0;
  const ids = () => `batch_req_${String(++n).padStart(3, '0')}`;
  switch (c.kind) {
    case 'openai-input':
      return openaiInput(lines, () => c.upstreamModel!)
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l));
    case 'openai-results':
      return plain(openaiResults((c.files ?? []).map((f) => read(name, f)), c.expired === true, ids));
    case 'anthropic-requests':
      return anthropicRequests(lines, () => ({ model: c.upstreamModel!, options: { maxOutputTokens: 64000 } }));
    case 'anthropic-results':
      return plain(anthropicResults(read(name, c.files![0]!), new Map(lines.map((l) => [l.custom_id, l])), c.expired === true, ids, deterministicOptions()));
  }
}

describe('native-batch codec (golden)', () => {
  it('has cases of every kind', () => {
    const kinds = new Set(cases.map((name) => (JSON.parse(read(name, 'case.json')) as Case).kind));
    expect([...kinds].sort()).toEqual(['anthropic-requests', 'anthropic-results', 'openai-input', 'openai-results']);
  });
  for (const name of cases) {
    it(name, () => {
      const got = run(name);
      const file = join(DIR, name, 'expected.json');
      if (process.env.ROUTER_UPDATE_GOLDEN === '1') writeFileSync(file, `${JSON.stringify(got, null, 2)}\n`);
      expect(existsSync(file), `${name}/expected.json`).toBe(true);
      expect(got).toEqual(JSON.parse(readFileSync(file, 'utf8')));
    });
  }
});
