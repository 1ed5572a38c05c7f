import type { IrMessage, IrPart, TextPart } from '../ir.js';

/**
 * Positional system messages. A system (or developer) message that opens a conversation is the system
 * prompt (`IrRequest.system`); one placed later, as Claude Code, Codex and agent frameworks do to inject
 * reminders, stays an IR `system` message at its position. Formats with a positional system role (Chat
 * Completions, Responses, Anthropic with the mid-conversation beta) write it there; the others fold it into
 * the neighbouring user turn as text marked as a system note.
 */

/** Splits the system messages that open a conversation (the system prompt) from the rest, which keep their place. */
export function splitLeadingSystem(messages: IrMessage[]): { system: TextPart[]; messages: IrMessage[] } {
  let i = 0;
  const system: TextPart[] = [];
  for (; i < messages.length && messages[i]!.role === 'system'; i++) system.push(...systemText(messages[i]!.parts));
  return { system, messages: i ? messages.slice(i) : messages };
}

/** The text parts of a system message (its only kind of content). */
export function systemText(parts: IrPart[]): TextPart[] {
  return parts.flatMap((p): TextPart[] => (p.type === 'text' && p.text !== '' ? [p] : []));
}

/** A system message's text as a user-turn text part, clearly marked so the model reads it as instructions. */
export function systemNote(parts: IrPart[]): TextPart {
  const text = systemText(parts)
    .map((p) => p.text)
    .join('\n\n');
  return { type: 'text', text: `<system-note>\n${text}\n</system-note>` };
}

/**
 * Folds `system` messages into user turns for formats without a positional system role: into the user
 * message just before, else into a user message placed after the tool results that follow (tool results
 * must open a user turn in Anthropic and Gemini), at the end when nothing follows. The input is not mutated.
 */
export function foldSystemMessages(messages: IrMessage[]): IrMessage[] {
  if (!messages.some((m) => m.role === 'system')) return messages;
  const out: IrMessage[] = [];
  let pending: TextPart[] = [];
  const flush = () => {
    if (pending.length) out.push({ role: 'user', parts: pending });
    pending = [];
  };
  for (const m of messages) {
    if (m.role === 'system') {
      const last = out[out.length - 1];
      if (last?.role === 'user' && !pending.length) out[out.length - 1] = { ...last, parts: [...last.parts, systemNote(m.parts)] };
      else pending.push(systemNote(m.parts));
      continue;
    }
    if (m.role !== 'tool') flush();
    out.push(m);
  }
  flush();
  return out;
}
