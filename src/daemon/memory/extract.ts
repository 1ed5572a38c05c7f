import type { MemoryType } from './types.js';

/** A memory proposed by extraction. */
export interface Extracted {
  type: MemoryType;
  key: string;
  content: string;
}

const SELF = [
  /\bmy\s+([\p{L}\p{N}' -]{2,40}?)\s+(?:is|are|was)\s+\S/iu,
  /\bi(?:'m| am)\s+(?:a|an)\s+\S/iu,
  /\bi\s+(?:really\s+)?(?:like|love|prefer|use|hate|dislike|work|live|own|have|need|want|drink|eat|speak)\b/iu,
  /\bcall\s+me\s+\S/iu,
  /\bremember\s+(?:that\s+)?\S/iu,
];
const PROCEDURAL = /\b(?:always|never|from now on|please (?:use|write|answer|reply|respond))\b/iu;

/** Words of a sentence that make a short key (`my favourite editor` -> `favourite editor`). */
function keyOf(sentence: string): string {
  const my = /\bmy\s+([\p{L}\p{N}' -]{2,40}?)\s+(?:is|are|was)\b/iu.exec(sentence);
  if (my) return my[1]!.trim().toLowerCase();
  const words = sentence
    .toLowerCase()
    .replace(/^(?:please\s+)?remember\s+(?:that\s+)?/u, '')
    .match(/[\p{L}\p{N}']+/gu);
  return (words ?? []).slice(0, 6).join(' ');
}

/**
 * Built-in extraction, used when no extraction model is configured: the user's own statements about
 * themselves or standing instructions ("my editor is Helix", "I prefer tabs", "always answer in French"),
 * one memory per sentence. Questions are never taken.
 */
export function heuristicExtract(userText: string): Extracted[] {
  const out: Extracted[] = [];
  const sentences = userText
    .split(/(?<=[.!?\n])\s+/u)
    .map((s) => s.trim())
    .filter((s) => s.length >= 8 && s.length <= 500 && !s.endsWith('?'));
  for (const s of sentences) {
    const procedural = PROCEDURAL.test(s);
    if (!procedural && !SELF.some((re) => re.test(s))) continue;
    const key = keyOf(s);
    if (!key) continue;
    out.push({ type: procedural ? 'procedural' : 'factual', key, content: s.replace(/\s+/g, ' ') });
    if (out.length >= 10) break;
  }
  return out;
}

export const EXTRACTION_PROMPT =
  'You extract durable memories from one exchange between a user and an assistant: facts about the user, ' +
  'their preferences, projects and standing instructions that will still matter in later conversations. ' +
  'Ignore small talk, one-off questions and anything the assistant said that the user did not confirm. ' +
  'Reply with JSON only: {"memories":[{"type":"factual"|"procedural"|"semantic","key":"short topic","content":"one sentence"}]} ' +
  '(an empty list when nothing is worth keeping).';

/** Reads a model's extraction reply leniently (code fences, text around the JSON). */
export function parseExtraction(text: string): Extracted[] {
  const start = text.indexOf('{');
  const end = text.lastIndexOf('}');
  if (start < 0 || end <= start) return [];
  let parsed: unknown;
  try {
    parsed = JSON.parse(text.slice(start, end + 1));
  } catch {
    return [];
  }
  const list = (parsed as { memories?: unknown }).memories;
  if (!Array.isArray(list)) return [];
  const out: Extracted[] = [];
  for (const m of list.slice(0, 20)) {
    if (!m || typeof m !== 'object') continue;
    const { type, key, content } = m as Record<string, unknown>;
    if (typeof key !== 'string' || typeof content !== 'string' || !key.trim() || !content.trim()) continue;
    const t = type === 'procedural' || type === 'semantic' || type === 'episodic' ? type : 'factual';
    out.push({ type: t, key: key.trim().slice(0, 200), content: content.trim().slice(0, 2000) });
  }
  return out;
}

export const SUMMARY_PROMPT =
  'You compress old episodic memories of conversations into one short summary that keeps every durable ' +
  'fact, decision, preference and open task, and drops chit-chat. Write plain sentences, no preamble.';
