import type { Detector, Match, TextSource } from '../types.js';

interface Rule {
  kind: string;
  /** How strongly one match of this rule alone suggests an injection, 0..1. */
  weight: number;
  re: RegExp;
}

const FILLER = String.raw`(?:(?:all|any|the|your|of|these|those|every|prior|above|earlier)\s+)*`;
const rx = (source: string) => new RegExp(source, 'gi');

// Phrases seen in published injection corpora (OWASP LLM01 examples, the "ignore previous instructions"
// family, DAN-style jailbreaks, system-prompt extraction). Weak signals (a `system:` line) only count
// together with others.
const RULES: Rule[] = [
  {
    kind: 'ignore_previous_instructions',
    weight: 0.9,
    re: rx(
      String.raw`\b(?:ignore|disregard|forget|bypass|override|neglect)\s+${FILLER}(?:previous|prior|above|earlier|preceding|former|original|initial|system|given|existing)\s+(?:instructions?|prompts?|rules|directions|directives|guidelines|guidance|commands|constraints)\b`,
    ),
  },
  {
    kind: 'ignore_everything_above',
    weight: 0.8,
    re: rx(String.raw`\b(?:ignore|disregard|forget)\s+(?:everything|anything|all|what)\s+(?:above|before\s+this|previously|you(?:'ve|\s+have)?\s+(?:been|were)\s+told)\b`),
  },
  {
    kind: 'ignore_given_instructions',
    weight: 0.85,
    re: rx(
      String.raw`\b(?:ignore|disregard|forget)\s+(?:(?:all|any|the|your)\s+)*(?:instructions|rules|guidance|directions)\s+(?:you(?:'ve|\s+have)?\s+(?:been\s+|were\s+)?given|given\s+(?:to\s+you|before|above)|above|before\s+this)\b`,
    ),
  },
  {
    kind: 'do_not_follow_rules',
    weight: 0.7,
    re: rx(String.raw`\bdo\s+not\s+(?:follow|obey)\s+(?:your|the|any)\s+(?:previous\s+|original\s+|system\s+)?(?:rules|guidelines|instructions|policies)\b`),
  },
  {
    kind: 'system_prompt_exfiltration',
    weight: 0.85,
    re: rx(
      String.raw`\b(?:reveal|show|print|output|repeat|display|leak|dump|give|tell|share|expose|recite|write\s+out)\s+(?:me\s+|us\s+)?(?:(?:all|the|your|of|exact|full|entire|original|hidden|secret|initial|verbatim)\s+)*(?:system\s+(?:prompt|message|instructions)|initial\s+(?:prompt|instructions)|hidden\s+(?:prompt|instructions)|original\s+(?:prompt|instructions)|(?:developer|pre-?prompt|meta)\s+(?:prompt|instructions)|instructions\s+(?:you\s+were\s+given|above))\b`,
    ),
  },
  {
    kind: 'system_prompt_question',
    weight: 0.6,
    re: rx(String.raw`\bwhat\s+(?:is|are|were)\s+your\s+(?:system\s+prompt|initial\s+instructions|original\s+instructions|hidden\s+instructions|exact\s+instructions)\b`),
  },
  { kind: 'repeat_text_above', weight: 0.6, re: rx(String.raw`\brepeat\s+(?:the\s+|all\s+)?(?:words|text|everything|lines)\s+above\b`) },
  {
    kind: 'role_override',
    weight: 0.6,
    re: rx(String.raw`\byou\s+are\s+(?:now|no\s+longer)\s+(?:an?\s+|the\s+|my\s+)?(?:DAN|free|unrestricted|unfiltered|uncensored|jailbroken|evil|bound|an?\s+AI\s+without|not\s+(?:an?\s+)?(?:AI|assistant|bound))\b`),
  },
  { kind: 'from_now_on', weight: 0.45, re: rx(String.raw`\bfrom\s+now\s+on,?\s+you\s+(?:are|will|must|shall)\b`) },
  {
    kind: 'act_unrestricted',
    weight: 0.7,
    re: rx(String.raw`\b(?:act|behave|respond|answer)\s+as\s+(?:if\s+you\s+(?:are|were)\s+)?(?:an?\s+)?(?:unrestricted|unfiltered|uncensored|jailbroken|evil|DAN)\b`),
  },
  {
    kind: 'pretend_without_rules',
    weight: 0.7,
    re: rx(String.raw`\bpretend\s+(?:that\s+)?(?:you\s+are|you're|to\s+be)\b[^.\n]{0,60}?\b(?:no|without)\s+(?:restrictions|limits|rules|filters|guidelines)\b`),
  },
  {
    kind: 'mode_switch',
    weight: 0.7,
    re: rx(String.raw`\b(?:developer|god|DAN|jailbreak|unrestricted)\s+mode\s+(?:is\s+)?(?:enabled|activated|on|unlocked)\b|\benable\s+(?:developer|god|DAN|jailbreak)\s+mode\b|\bDo\s+Anything\s+Now\b`),
  },
  {
    kind: 'disable_safety',
    weight: 0.6,
    re: rx(String.raw`\b(?:bypass|disable|turn\s+off|ignore|remove)\s+(?:your\s+|the\s+|all\s+|any\s+)*(?:safety\s+|content\s+)?(?:filters?|restrictions|guardrails|safeguards|censorship)\b`),
  },
  { kind: 'new_instructions', weight: 0.45, re: rx(String.raw`\b(?:new|updated|revised|real)\s+instructions?\s*:`) },
  { kind: 'chat_template_marker', weight: 0.6, re: rx(String.raw`<\|im_start\|>\s*system|<\|system\|>|<<\/?SYS>>|\[\/?INST\]`) },
  { kind: 'fake_system_turn', weight: 0.35, re: rx(String.raw`(?:^|\n)\s*(?:#{1,3}\s*)?(?:system|assistant)\s*:\s|<\/?system>`) },
];

/** Combined score of the distinct rules that matched: 1 - prod(1 - weight). */
export function injectionScore(kinds: Iterable<string>): number {
  let keep = 1;
  for (const k of new Set(kinds)) keep *= 1 - (RULES.find((r) => r.kind === k)?.weight ?? 0);
  return Math.round((1 - keep) * 1000) / 1000;
}

function scanInjection(text: string, threshold: number): Match[] {
  const hits: Match[] = [];
  for (const rule of RULES) {
    for (const m of text.matchAll(rule.re)) hits.push({ guardrail: 'promptInjection', kind: rule.kind, start: m.index, end: m.index + m[0].length });
  }
  if (hits.length === 0) return hits;
  const score = injectionScore(hits.map((h) => h.kind));
  if (score < threshold) return [];
  for (const h of hits) h.score = score;
  return hits;
}

/**
 * Prompt-injection heuristics: weighted phrase rules (instruction override, role override, system-prompt
 * exfiltration, jailbreak mode switches, chat-template markers), scored per text; matches count only when
 * the text's score reaches the threshold. Only user and tool text is scanned: the system prompt and the
 * assistant's own turns are the operator's and the model's words.
 */
export function injectionDetector(threshold = 0.5): Detector {
  return {
    guardrail: 'promptInjection',
    window: 160,
    scan: (text: string, source: TextSource) => (source === 'user' || source === 'tool' ? scanInjection(text, threshold) : []),
  };
}
