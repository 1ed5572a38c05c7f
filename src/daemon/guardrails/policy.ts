import type { GuardrailConfig } from './config.js';
import { injectionDetector } from './detectors/injection.js';
import { piiDetector } from './detectors/pii.js';
import { secretsDetector } from './detectors/secrets.js';
import { termsDetector } from './detectors/terms.js';
import { GUARDRAIL_NAMES, type Detector, type Direction, type Finding, type GuardrailMode, type GuardrailName, type Match, type TextSource } from './types.js';

interface Active {
  detector: Detector;
  mode: Exclude<GuardrailMode, 'off'>;
}

/** What one text came out as. */
export interface Applied {
  text: string;
  findings: Finding[];
  /** The first block-mode finding, in guardrail order. */
  block?: Finding;
}

const PRIORITY = new Map(GUARDRAIL_NAMES.map((n, i) => [n, i]));

/** The replacement of a redacted span. */
export const redaction = (kind: string) => `[REDACTED:${kind}]`;

/** A finding's text as reports show it: enough to recognize, never enough to reuse. */
export function maskSample(raw: string): string {
  const s = raw.replace(/\s+/g, ' ');
  if (s.length <= 4) return '*'.repeat(s.length);
  const keep = s.length >= 16 ? 3 : s.length >= 8 ? 2 : 1;
  return `${s.slice(0, keep)}${'*'.repeat(Math.min(s.length - 2 * keep, 12))}${s.slice(-keep)}`;
}

/** Matches of one guardrail that overlap are one finding (e.g. a number seen by two phone patterns). */
function dedupe(matches: Match[]): Match[] {
  const sorted = [...matches].sort((a, b) => a.start - b.start || b.end - a.end);
  const out: Match[] = [];
  for (const m of sorted) {
    const prev = out.findLast((o) => o.guardrail === m.guardrail);
    if (prev && m.start < prev.end) continue;
    out.push(m);
  }
  return out;
}

/** Replaces the redact-mode spans (overlapping spans merged into one, named by the longest). */
export function redactSpans(text: string, findings: readonly Finding[]): string {
  const spans = findings.filter((f) => f.action === 'redact').sort((a, b) => a.start - b.start || b.end - a.end);
  if (spans.length === 0) return text;
  let out = '';
  let pos = 0;
  for (let i = 0; i < spans.length; ) {
    const { start } = spans[i]!;
    let { end, kind } = spans[i]!;
    let longest = end - start;
    for (i++; i < spans.length && spans[i]!.start < end; i++) {
      const next = spans[i]!;
      if (next.end - next.start > longest) {
        kind = next.kind;
        longest = next.end - next.start;
      }
      end = Math.max(end, next.end);
    }
    out += text.slice(pos, start) + redaction(kind);
    pos = end;
  }
  return out + text.slice(pos);
}

/**
 * One effective configuration compiled for use: the detectors each direction runs with their modes. Built
 * once per configuration change (and per key with an override), never per request.
 */
export class GuardrailPolicy {
  readonly enabled: boolean;
  private readonly active: Record<Direction, Active[]>;
  /** Longest whitespace-containing span a streamed reply must hold back (see stream.ts). */
  readonly responseWindow: number;
  readonly maxInput?: { mode: 'log' | 'block'; maxChars: number };
  /** The moderation-model detector (requests only; guardrails/moderation.ts), when on. */
  readonly moderation?: { mode: 'log' | 'block'; model: string; categories: readonly string[] };

  constructor(readonly config: GuardrailConfig) {
    this.active = { request: [], response: [] };
    const add = (applyTo: 'request' | 'response' | 'both', mode: GuardrailMode, detector: Detector | undefined) => {
      if (mode === 'off' || !detector) return;
      if (applyTo !== 'response') this.active.request.push({ detector, mode });
      if (applyTo !== 'request') this.active.response.push({ detector, mode });
    };
    const c = config;
    add(c.blockedTerms.applyTo, c.blockedTerms.mode, termsDetector(c.blockedTerms.terms, c.blockedTerms));
    add(c.secrets.applyTo, c.secrets.mode, c.secrets.kinds.length ? secretsDetector(c.secrets.kinds) : undefined);
    add(c.pii.applyTo, c.pii.mode, c.pii.kinds.length ? piiDetector(c.pii.kinds) : undefined);
    add(c.promptInjection.applyTo, c.promptInjection.mode, injectionDetector(c.promptInjection.threshold));
    if (c.maxInputSize.mode !== 'off') this.maxInput = { mode: c.maxInputSize.mode, maxChars: c.maxInputSize.maxChars };
    if (c.moderation.mode !== 'off') this.moderation = { mode: c.moderation.mode, model: c.moderation.model, categories: c.moderation.categories };
    this.responseWindow = Math.max(0, ...this.active.response.map((a) => a.detector.window));
    this.enabled = this.active.request.length > 0 || this.active.response.length > 0 || this.maxInput !== undefined || this.moderation !== undefined;
  }

  /** Whether anything runs on this side. */
  has(direction: Direction): boolean {
    return this.active[direction].length > 0 || (direction === 'request' && (this.maxInput !== undefined || this.moderation !== undefined));
  }

  /** Every finding of the active detectors in a text, each with its guardrail's mode as the action. */
  scan(text: string, source: TextSource, direction: Direction): Finding[] {
    const out: Finding[] = [];
    for (const { detector, mode } of this.active[direction]) {
      for (const m of dedupe(detector.scan(text, source))) out.push({ ...m, action: mode });
    }
    return out.sort((a, b) => a.start - b.start);
  }

  /** Scans a text and applies redactions; says which finding blocks, if any. */
  apply(text: string, source: TextSource, direction: Direction): Applied {
    const findings = this.scan(text, source, direction);
    return { text: findings.length ? redactSpans(text, findings) : text, findings, block: firstBlock(findings) };
  }

  /** The max-input-size finding for a request of `chars` characters, if it is too long. */
  sizeFinding(chars: number): Finding | undefined {
    if (!this.maxInput || chars <= this.maxInput.maxChars) return undefined;
    return { guardrail: 'maxInputSize', kind: 'too_long', start: 0, end: chars, action: this.maxInput.mode };
  }
}

/** The block-mode finding of the highest-priority guardrail. */
export function firstBlock(findings: readonly Finding[]): Finding | undefined {
  let best: Finding | undefined;
  for (const f of findings) {
    if (f.action !== 'block') continue;
    if (!best || PRIORITY.get(f.guardrail)! < PRIORITY.get(best.guardrail)!) best = f;
  }
  return best;
}

/** Per-guardrail counts of findings, for notes and logs (no text, not even masked). */
export function summarize(findings: readonly Finding[]): Array<{ guardrail: GuardrailName; kind: string; action: string; count: number }> {
  const map = new Map<string, { guardrail: GuardrailName; kind: string; action: string; count: number }>();
  for (const f of findings) {
    const id = `${f.guardrail}/${f.kind}/${f.action}`;
    const e = map.get(id) ?? { guardrail: f.guardrail, kind: f.kind, action: f.action, count: 0 };
    e.count++;
    map.set(id, e);
  }
  return [...map.values()];
}
