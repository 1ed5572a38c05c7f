/** The guardrails router ships, by the names the API, errors and logs use. */
export const GUARDRAIL_NAMES = ['maxInputSize', 'blockedTerms', 'secrets', 'pii', 'promptInjection', 'moderation'] as const;
export type GuardrailName = (typeof GUARDRAIL_NAMES)[number];

/** off: not run; log: findings recorded, nothing changed; redact: matched text replaced; block: request or reply refused. */
export type GuardrailMode = 'off' | 'log' | 'redact' | 'block';

/** Which side of a call a text is on. */
export type Direction = 'request' | 'response';

/** Who wrote a text inside a request: prompt-injection heuristics look at user and tool text only. */
export type TextSource = 'system' | 'user' | 'assistant' | 'tool';

/** One match of a detector in one text: `[start, end)` in UTF-16 code units of the original text. */
export interface Match {
  guardrail: GuardrailName;
  /** What was found, e.g. `email`, `openai_key`, `ignore_previous_instructions`. */
  kind: string;
  start: number;
  end: number;
  /** Prompt injection: the score of the whole text the match belongs to. */
  score?: number;
}

/** A finding with what the policy did about it. */
export interface Finding extends Match {
  action: Exclude<GuardrailMode, 'off'>;
}

/** A text detector: finds matches, knows nothing about modes. */
export interface Detector {
  guardrail: GuardrailName;
  scan(text: string, source: TextSource): Match[];
  /**
   * Longest stretch of text, containing whitespace, that one of its matches can span. Streamed replies
   * hold back at least this much (plus the trailing run of non-whitespace) so a match split across chunks
   * is still seen whole.
   */
  window: number;
}
