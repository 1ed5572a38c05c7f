import type { ContentBehavior, MockRequest } from './types.js';

export const DEFAULT_TEXT = 'Hello from the mock.';
export const DEFAULT_THINKING = 'The user greets me; a short friendly answer fits.';
export const DEFAULT_SIGNATURE = 'bW9jay1zaWduYXR1cmU=';

/** Deterministic token estimate: one token per started 4 bytes of UTF-8, at least 1 for non-empty text. */
export function tokenCount(text: string): number {
  return Math.ceil(Buffer.byteLength(text, 'utf8') / 4);
}

/** Input tokens the mock reports for a request: a function of the raw body size only. */
export function inputTokensFor(req: Pick<MockRequest, 'body'>): number {
  return Math.max(1, tokenCount(req.body));
}

export type Finish = 'stop' | 'length' | 'tool_calls' | 'content_filter';

export interface PlannedCall {
  /** Stable per request and position, e.g. `mock3_0`; each format prefixes it its own way. */
  key: string;
  id?: string;
  name: string;
  arguments: string;
}

/** A provider-neutral description of one model answer, rendered by each wire format. */
export interface Reply {
  thinking?: { text: string; signature: string };
  text: string;
  calls: PlannedCall[];
  finish: Finish;
  chunks: number;
  usage: { input: number; output: number; cached: number; reasoning: number };
}

/** Turns a content behavior into the answer every format renders. */
export function planReply(b: ContentBehavior, req: MockRequest, defaultText: string): Reply {
  let reply: Omit<Reply, 'usage' | 'chunks'>;
  switch (b.type) {
    case 'text':
      reply = { text: b.text ?? defaultText, calls: [], finish: 'stop' };
      break;
    case 'tool-calls':
      reply = {
        text: b.text ?? '',
        calls: b.calls.map((c, i) => ({
          key: `mock${req.index}_${i}`,
          id: c.id,
          name: c.name,
          arguments: typeof c.arguments === 'string' ? c.arguments : JSON.stringify(c.arguments),
        })),
        finish: 'tool_calls',
      };
      break;
    case 'thinking':
      reply = {
        thinking: { text: b.thinking ?? DEFAULT_THINKING, signature: b.signature ?? DEFAULT_SIGNATURE },
        text: b.text ?? defaultText,
        calls: [],
        finish: 'stop',
      };
      break;
    case 'max-tokens':
      reply = { text: b.text ?? truncate(defaultText), calls: [], finish: 'length' };
      break;
    case 'content-filter':
      reply = { text: '', calls: [], finish: 'content_filter' };
      break;
  }
  const reasoning = reply.thinking ? tokenCount(reply.thinking.text) : 0;
  const visible = tokenCount(reply.text) + reply.calls.reduce((n, c) => n + tokenCount(c.name + c.arguments), 0);
  const o = b.usage ?? {};
  const usage = {
    input: o.inputTokens ?? inputTokensFor(req),
    reasoning: o.reasoningTokens ?? reasoning,
    output: o.outputTokens ?? visible + (o.reasoningTokens ?? reasoning),
    cached: o.cachedTokens ?? 0,
  };
  return { ...reply, chunks: Math.max(1, b.chunks ?? 3), usage };
}

function truncate(text: string): string {
  const chars = Array.from(text);
  return chars.slice(0, Math.max(1, Math.floor(chars.length / 2))).join('');
}

/** Splits text into at most `n` non-empty pieces without cutting a code point in two. */
export function splitText(text: string, n: number): string[] {
  const chars = Array.from(text);
  if (chars.length === 0) return [];
  const count = Math.min(n, chars.length);
  const out: string[] = [];
  for (let i = 0; i < count; i++) {
    out.push(chars.slice(Math.floor((i * chars.length) / count), Math.floor(((i + 1) * chars.length) / count)).join(''));
  }
  return out;
}

/** Argument JSON is always sent in several fragments so clients must concatenate before parsing. */
export function splitArguments(args: string): string[] {
  return splitText(args, Math.min(4, Math.max(2, Math.ceil(args.length / 8))));
}

/** A small random-looking id suffix that stays stable for a given request and salt. */
export function mockId(req: MockRequest, salt = ''): string {
  let h = 2166136261;
  for (const ch of `${req.index}:${salt}:${req.body.length}`) h = Math.imul(h ^ ch.charCodeAt(0), 16777619);
  return `Mock${(h >>> 0).toString(36)}${req.index.toString(36)}`;
}

export function nowSeconds(): number {
  return Math.floor(Date.now() / 1000);
}
