import { RouterError } from '../http/errors.js';
import type { Direction, Finding } from './types.js';

const WHAT: Record<string, string> = {
  maxInputSize: 'is longer than the configured maximum input size',
  blockedTerms: 'contains a blocked term',
  secrets: 'contains a secret',
  pii: 'contains personal data',
  promptInjection: 'looks like a prompt injection',
  moderation: 'was flagged by the moderation model',
};

/** The 400 a block answers with: standard body, code `guardrail_blocked`, `guardrail` naming the guardrail. */
export function guardrailBlocked(f: Finding, direction: Direction): RouterError {
  const detail = f.guardrail === 'maxInputSize' || f.guardrail === 'promptInjection' ? '' : ` (${f.kind})`;
  return new RouterError(400, `Blocked by guardrail '${f.guardrail}': the ${direction} ${WHAT[f.guardrail]}${detail}.`, {
    code: 'guardrail_blocked',
    extra: { guardrail: f.guardrail },
  });
}
