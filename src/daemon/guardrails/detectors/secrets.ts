import type { Detector, Match } from '../types.js';

export const SECRET_KINDS = [
  'openai_key',
  'anthropic_key',
  'aws_access_key_id',
  'aws_secret_access_key',
  'github_token',
  'google_api_key',
  'slack_token',
  'stripe_key',
  'jwt',
  'private_key',
] as const;
export type SecretKind = (typeof SECRET_KINDS)[number];

interface Pattern {
  kind: SecretKind;
  re: RegExp;
  /** Cheap pre-check: the pattern cannot match a text without this substring. */
  hint: string;
  /** Capture group that holds the secret itself (the rest is context such as `aws_secret_access_key=`). */
  group?: number;
}

// Each format as its issuer documents it. Boundaries are look-arounds on the token alphabet so a key
// inside a longer token (a hash, a URL path segment) does not count.
const PATTERNS: Pattern[] = [
  {
    kind: 'private_key',
    hint: 'PRIVATE KEY',
    // A whole PEM block; a header without its footer (a truncated paste) takes the base64 that follows.
    re: /-----BEGIN[A-Z0-9 ]{0,40} PRIVATE KEY(?: BLOCK)?-----(?:[\s\S]{0,16384}?-----END[A-Z0-9 ]{0,40} PRIVATE KEY(?: BLOCK)?-----|[A-Za-z0-9+/=\s:,-]*)/g,
  },
  { kind: 'anthropic_key', hint: 'sk-ant-', re: /(?<![\w-])sk-ant-[a-z]{2,8}\d{0,3}-[A-Za-z0-9_-]{20,300}(?![\w-])/g },
  { kind: 'openai_key', hint: 'sk-', re: /(?<![\w-])sk-(?:proj|svcacct|admin|None)-[A-Za-z0-9_-]{20,300}(?![\w-])/g },
  // Legacy user keys: 48 characters, the middle holding T3BlbkFJ ("OpenAI" in base64).
  { kind: 'openai_key', hint: 'sk-', re: /(?<![\w-])sk-(?:[A-Za-z0-9]{20}T3BlbkFJ[A-Za-z0-9]{20}|[A-Za-z0-9]{48})(?![\w-])/g },
  { kind: 'aws_access_key_id', hint: 'A', re: /(?<![A-Za-z0-9])(?:AKIA|ASIA|ABIA|ACCA|A3T[A-Z0-9])[A-Z0-9]{16}(?![A-Za-z0-9])/g },
  {
    kind: 'aws_secret_access_key',
    hint: '',
    group: 1,
    // 40 base64 characters are everywhere (hashes); only next to their conventional name are they this.
    re: /(?:aws_?secret_?(?:access_?)?key|secret_?access_?key)["']?\s*[:=]\s*["']?([A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])/dgi,
  },
  { kind: 'github_token', hint: 'gh', re: /(?<![A-Za-z0-9_])gh[pousr]_[A-Za-z0-9]{36,251}(?![A-Za-z0-9_])/g },
  { kind: 'github_token', hint: 'github_pat_', re: /(?<![A-Za-z0-9_])github_pat_[A-Za-z0-9]{22}_[A-Za-z0-9]{59}(?![A-Za-z0-9_])/g },
  { kind: 'google_api_key', hint: 'AIza', re: /(?<![\w-])AIza[0-9A-Za-z_-]{35}(?![\w-])/g },
  { kind: 'slack_token', hint: 'xox', re: /(?<![\w-])xox[abposre]-\d{6,}(?:-[0-9A-Za-z]{6,}){1,3}(?![\w-])/g },
  { kind: 'slack_token', hint: 'xapp-', re: /(?<![\w-])xapp-\d-[A-Z0-9]{6,}-\d{6,}-[a-f0-9]{32,}(?![\w-])/g },
  { kind: 'slack_token', hint: 'hooks.slack.com', re: /https:\/\/hooks\.slack\.com\/services\/T[A-Z0-9]{6,}\/B[A-Z0-9]{6,}\/[A-Za-z0-9]{20,}/g },
  { kind: 'stripe_key', hint: '_live_', re: /(?<![\w-])(?:sk|rk)_live_[A-Za-z0-9]{20,247}(?![\w-])/g },
  { kind: 'stripe_key', hint: '_test_', re: /(?<![\w-])(?:sk|rk)_test_[A-Za-z0-9]{20,247}(?![\w-])/g },
  // Header and payload are base64url JSON objects, so both start with eyJ ('{"').
  { kind: 'jwt', hint: 'eyJ', re: /(?<![\w-])eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{16,}(?![\w-])/g },
];

function scanSecrets(text: string, patterns: Pattern[]): Match[] {
  const out: Match[] = [];
  for (const p of patterns) {
    if (p.hint && !text.includes(p.hint)) continue;
    for (const m of text.matchAll(p.re)) {
      const [start, end] = p.group ? m.indices![p.group]! : [m.index, m.index + m[0].length];
      out.push({ guardrail: 'secrets', kind: p.kind, start, end });
    }
  }
  return out;
}

/**
 * API keys and credentials of well-known formats: OpenAI, Anthropic, AWS access key ids (and secret keys
 * next to their name), GitHub, Google API keys, Slack tokens and webhooks, Stripe, JWTs and PEM private keys.
 */
export function secretsDetector(kinds: readonly SecretKind[] = SECRET_KINDS): Detector {
  const set = new Set(kinds);
  const patterns = PATTERNS.filter((p) => set.has(p.kind));
  // 80: the longest match containing whitespace apart from PEM blocks (`aws_secret_access_key = "<40>"`);
  // PEM blocks are held from their BEGIN line (see stream.ts).
  return { guardrail: 'secrets', window: 80, scan: (text) => scanSecrets(text, patterns) };
}
