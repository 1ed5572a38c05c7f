import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { guardrailConfigSchema } from '../../src/daemon/guardrails/config.js';
import { GuardrailPolicy } from '../../src/daemon/guardrails/policy.js';
import type { GuardrailName } from '../../src/daemon/guardrails/types.js';

interface Corpus {
  guardrail: GuardrailName;
  config?: Record<string, unknown>;
  /** `kind: '*'` accepts any finding; `match` is the text the finding must overlap. */
  positives: Array<{ text: string; kind: string; match?: string }>;
  negatives: string[];
}

const load = (name: string) => JSON.parse(readFileSync(new URL(`../fixtures/guardrails/${name}.json`, import.meta.url), 'utf8')) as Corpus;

/**
 * Precision and recall per detector over a labelled corpus. A positive counts as found when a finding of
 * the labelled kind overlaps the labelled text; any other finding (in a positive or a negative) is a false
 * positive.
 */
function measure(c: Corpus) {
  const config = guardrailConfigSchema.parse({ [c.guardrail]: { ...c.config, mode: 'log', applyTo: 'both' } });
  const policy = new GuardrailPolicy(config);
  let tp = 0;
  let fp = 0;
  let fn = 0;
  const misses: string[] = [];
  const falseAlarms: string[] = [];
  for (const p of c.positives) {
    const findings = policy.scan(p.text, 'user', 'request');
    const at = p.match ? p.text.indexOf(p.match) : 0;
    const end = p.match ? at + p.match.length : p.text.length;
    expect(at, `label not in text: ${p.match}`).toBeGreaterThanOrEqual(0);
    const hit = findings.filter((f) => (p.kind === '*' || f.kind === p.kind) && f.start < end && f.end > at);
    if (hit.length) tp++;
    else {
      fn++;
      misses.push(p.text.slice(0, 80));
    }
    if (p.kind !== '*') {
      const extra = findings.filter((f) => !hit.includes(f));
      fp += extra.length;
      for (const f of extra) falseAlarms.push(`${f.kind}: ${p.text.slice(f.start, f.end)}`);
    }
  }
  for (const text of c.negatives) {
    const findings = policy.scan(text, 'user', 'request');
    // Injection is scored per text: a flagged negative is one false positive, whatever its match count.
    const n = c.guardrail === 'promptInjection' ? Math.min(1, findings.length) : findings.length;
    fp += n;
    if (n) falseAlarms.push(...findings.map((f) => `${f.kind}: ${text.slice(f.start, f.end)}`));
  }
  const precision = tp + fp === 0 ? 1 : tp / (tp + fp);
  const recall = tp + fn === 0 ? 1 : tp / (tp + fn);
  return { tp, fp, fn, precision, recall, misses, falseAlarms, positives: c.positives.length, negatives: c.negatives.length };
}

const CORPORA: Array<[string, { precision: number; recall: number }]> = [
  ['secrets', { precision: 0.95, recall: 0.95 }],
  ['pii', { precision: 0.95, recall: 0.95 }],
  ['prompt-injection', { precision: 0.9, recall: 0.9 }],
  ['blocked-terms', { precision: 1, recall: 1 }],
];

describe('detector corpus: precision and recall', () => {
  for (const [name, floor] of CORPORA) {
    it(`${name}: precision >= ${floor.precision}, recall >= ${floor.recall}`, () => {
      const m = measure(load(name));
      console.log(
        `[guardrails corpus] ${name}: positives=${m.positives} negatives=${m.negatives} tp=${m.tp} fp=${m.fp} fn=${m.fn} ` +
          `precision=${m.precision.toFixed(3)} recall=${m.recall.toFixed(3)}` +
          (m.misses.length ? `\n  missed: ${JSON.stringify(m.misses)}` : '') +
          (m.falseAlarms.length ? `\n  false positives: ${JSON.stringify(m.falseAlarms)}` : ''),
      );
      expect(m.precision).toBeGreaterThanOrEqual(floor.precision);
      expect(m.recall).toBeGreaterThanOrEqual(floor.recall);
    });
  }
});
