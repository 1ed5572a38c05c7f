import type { EvalCheck } from '../../shared/observability.js';

// A reply wrapped in one Markdown code fence (```json ... ```), as models often answer "JSON only" prompts.
const FENCED_RE = /^```[\w-]*\s*\n([\s\S]*?)\n?```$/;

function isJson(text: string): boolean {
  const trimmed = text.trim();
  const body = FENCED_RE.exec(trimmed)?.[1] ?? trimmed;
  if (body === '') return false;
  try {
    JSON.parse(body);
    return true;
  } catch {
    return false;
  }
}

/**
 * Whether a reply satisfies one check. `contains`/`not-contains`/`equals` compare text (equals ignores
 * surrounding whitespace), optionally case-insensitively; `regex` tests the pattern with its flags;
 * `json-valid` parses the reply (or the one code fence it is wrapped in) as JSON.
 */
export function runCheck(check: EvalCheck, output: string): boolean {
  switch (check.type) {
    case 'json-valid':
      return isJson(output);
    case 'regex':
      return new RegExp(check.value, check.flags ?? '').test(output);
    default: {
      const fold = (s: string) => (check.ignoreCase ? s.toLowerCase() : s);
      const out = fold(output);
      const value = fold(check.value);
      if (check.type === 'equals') return out.trim() === value.trim();
      const found = out.includes(value);
      return check.type === 'contains' ? found : !found;
    }
  }
}
