import { RouterError } from '../http/errors.js';
import { estimateTokens } from '../proxy/count-tokens.js';
import type { IrMessage, IrRequest } from '../translate/ir.js';
import { tokenizer } from '../tokenizer.js';

/** What fitting did to a request. */
export interface FitResult {
  request: IrRequest;
  tokensBefore: number;
  tokensAfter: number;
  trimmedToolOutputs: number;
  droppedTurns: number;
}

export interface FitOptions {
  /** Prompt tokens the request may use. */
  budget: number;
  toolOutputMaxTokens: number;
  /** For the error message. */
  model: string;
  contextLength: number;
}

/** A tool result message: `tool` role, or a user message made only of tool results. */
const isToolMessage = (m: IrMessage) => m.role === 'tool' || (m.parts.length > 0 && m.parts.every((p) => p.type === 'tool_result'));

/**
 * Start indexes of the conversation's turns: a turn opens with a user message and holds everything up to
 * the next one (the assistant's reply, its tool calls and their results). Dropping whole turns never
 * separates a tool call from its result and keeps the conversation starting with a user message. Messages
 * before the first user message form a turn of their own.
 */
export function turnStarts(messages: readonly IrMessage[]): number[] {
  const starts: number[] = [];
  messages.forEach((m, i) => {
    if (i === 0 || (m.role === 'user' && !isToolMessage(m))) starts.push(i);
  });
  return starts;
}

/**
 * Cuts oversized tool outputs to their head and tail with a marker, oldest first, until the estimate is
 * within budget. Returns the new messages, how many outputs were cut, and the tokens saved.
 */
async function trimToolOutputs(messages: IrMessage[], maxTokens: number, excess: number): Promise<{ messages: IrMessage[]; trimmed: number }> {
  const { encode, decode } = await tokenizer();
  let trimmed = 0;
  let saved = 0;
  const out = messages.map((msg) => {
    if (saved >= excess) return msg;
    let changed = false;
    const parts = msg.parts.map((part) => {
      if (part.type !== 'tool_result' || saved >= excess) return part;
      let cut = false;
      const content = part.content.map((c) => {
        if (c.type !== 'text' || saved >= excess) return c;
        const tokens = encode(c.text);
        if (tokens.length <= maxTokens) return c;
        const head = Math.ceil(maxTokens / 2);
        const tail = maxTokens - head;
        const removed = tokens.length - maxTokens;
        const marker = `\n\n[... ${removed} tokens of tool output trimmed by router ...]\n\n`;
        saved += removed;
        trimmed++;
        cut = changed = true;
        return { ...c, text: `${decode(tokens.slice(0, head))}${marker}${tail > 0 ? decode(tokens.slice(-tail)) : ''}` };
      });
      return cut ? { ...part, content } : part;
    });
    return changed ? { ...msg, parts } : msg;
  });
  return { messages: out, trimmed };
}

function tooLong(opts: FitOptions, tokens: number, trimmed: number, dropped: number): RouterError {
  return new RouterError(
    400,
    `This request needs about ${tokens} prompt tokens but ${opts.model} has a context length of ${opts.contextLength} ` +
      `(${opts.budget} left for the prompt after room for the reply). Compression trimmed ${trimmed} tool output(s) and dropped ` +
      `${dropped} turn(s); the system prompt and the last user turn alone do not fit. Shorten them or use a model with a longer context.`,
    { code: 'context_length_exceeded', extra: { param: 'messages' } },
  );
}

/**
 * Fits a request into a prompt budget: first trims oversized tool outputs, then drops the oldest turns,
 * never the system prompt or the last user turn. Throws a 400 `context_length_exceeded` when even that
 * does not fit. The input request is not mutated.
 */
export async function fitRequest(ir: IrRequest, opts: FitOptions): Promise<FitResult> {
  const tokensBefore = await estimateTokens(ir);
  const result: FitResult = { request: ir, tokensBefore, tokensAfter: tokensBefore, trimmedToolOutputs: 0, droppedTurns: 0 };
  if (tokensBefore <= opts.budget) return result;

  let messages = ir.messages;
  let tokens = tokensBefore;
  const trim = await trimToolOutputs(messages, opts.toolOutputMaxTokens, tokens - opts.budget);
  if (trim.trimmed > 0) {
    messages = trim.messages;
    result.trimmedToolOutputs = trim.trimmed;
    tokens = await estimateTokens({ ...ir, messages });
  }

  const starts = turnStarts(messages);
  if (tokens > opts.budget && starts.length > 1) {
    // Per-turn estimates choose how many turns to drop in one go; the whole request is re-estimated after.
    const sizes = await Promise.all(
      starts.slice(0, -1).map((s, i) => estimateTokens({ system: [], messages: messages.slice(s, starts[i + 1]), model: ir.model, stream: false })),
    );
    let drop = 0;
    for (let excess = tokens - opts.budget; drop < sizes.length && excess > 0; drop++) excess -= sizes[drop]!;
    for (;;) {
      const kept = messages.slice(starts[drop]);
      tokens = await estimateTokens({ ...ir, messages: kept });
      if (tokens <= opts.budget || drop >= starts.length - 1) {
        messages = kept;
        break;
      }
      drop++;
    }
    result.droppedTurns = drop;
  }
  if (tokens > opts.budget) throw tooLong(opts, tokens, result.trimmedToolOutputs, result.droppedTurns);
  result.request = { ...ir, messages };
  result.tokensAfter = tokens;
  return result;
}
