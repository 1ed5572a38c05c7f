import type { IrMessage, IrPart, IrRequest, IrResponse } from '../translate/ir.js';
import type { TextSource } from './types.js';

/**
 * Rewrites one text; returns the same string when nothing changed. `copy` marks a text that repeats one
 * already passed (the raw prompt a legacy completion keeps for `echo`): rewrite it, do not count it again.
 */
export type TextFn = (text: string, source: TextSource, copy?: boolean) => string;

function mapPart(part: IrPart, source: TextSource, fn: TextFn): IrPart {
  switch (part.type) {
    case 'text':
    case 'refusal': {
      const text = fn(part.text, source);
      return text === part.text ? part : { ...part, text };
    }
    case 'tool_call': {
      // Arguments are JSON text; replacements contain no quote or backslash, so the JSON stays valid.
      const args = fn(part.arguments, 'assistant');
      return args === part.arguments ? part : { ...part, arguments: args };
    }
    case 'tool_result': {
      let changed = false;
      const content = part.content.map((c) => {
        const next = mapPart(c, 'tool', fn) as typeof c;
        changed ||= next !== c;
        return next;
      });
      return changed ? { ...part, content } : part;
    }
    case 'document': {
      if (part.source.kind !== 'text') return part;
      const text = fn(part.source.text, source);
      return text === part.source.text ? part : { ...part, source: { ...part.source, text } };
    }
    // Thinking is left alone: its signature covers the exact text and a changed text fails verification.
    default:
      return part;
  }
}

function mapMessage(msg: IrMessage, fn: TextFn): IrMessage {
  let changed = false;
  const parts = msg.parts.map((p) => {
    const next = mapPart(p, msg.role, fn);
    changed ||= next !== p;
    return next;
  });
  return changed ? { ...msg, parts } : msg;
}

/**
 * Runs `fn` over every text of a request (system prompt, messages, tool calls and results, text documents,
 * a legacy prompt). Returns a new request sharing whatever did not change; the input is never mutated (the
 * decoded request is reused for failover targets).
 */
export function mapRequestTexts(ir: IrRequest, fn: TextFn): IrRequest {
  const system = ir.system.map((p) => {
    const text = fn(p.text, 'system');
    return text === p.text ? p : { ...p, text };
  });
  const messages = ir.messages.map((m) => mapMessage(m, fn));
  const out: IrRequest = { ...ir, system, messages };
  if (ir.legacy) {
    const prompt = fn(ir.legacy.prompt, 'user', true);
    if (prompt !== ir.legacy.prompt) out.legacy = { ...ir.legacy, prompt };
  }
  return out;
}

/** Runs `fn` over the texts of a whole reply (text, refusal, tool-call arguments). */
export function mapResponseTexts(res: IrResponse, fn: TextFn): IrResponse {
  return { ...res, parts: res.parts.map((p) => mapPart(p, 'assistant', fn)) };
}

/** Characters of text in a request (the max-input-size measure). */
export function requestChars(ir: IrRequest): number {
  let n = 0;
  mapRequestTexts(ir, (t, _source, copy) => {
    if (!copy) n += t.length;
    return t;
  });
  return n;
}
