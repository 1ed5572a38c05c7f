/**
 * A provider-side prompt cache, as real providers keep one: per account (the API key a request carries),
 * a request whose prompt begins with messages the same account already saw reads those from the cache and
 * says so in its usage (`cached_tokens`, Anthropic `cache_read_input_tokens`, Gemini
 * `cachedContentTokenCount`). Another account has its own, cold cache. Install its handler on a mock:
 *
 *   const cache = promptCache();
 *   mock.handle(cache.handler);
 *
 * The cached count is the tokens (the mock's ceil(bytes / 4)) of the longest run of leading messages (and
 * system prompt) equal to a prompt this account sent before, never more than the request's input tokens.
 */
import { inputTokensFor, tokenCount } from './reply.js';
import type { Behavior, MockRequest } from './types.js';

export interface PromptCache {
  handler: (req: MockRequest) => Behavior | undefined;
  /** Per account: the prompts it has seen (each a list of serialized leading items). */
  readonly seen: Map<string, string[][]>;
  /** Per request, in arrival order: the account and the tokens read from its cache. */
  readonly reads: Array<{ account: string; cached: number; input: number }>;
  clear(): void;
}

/** The account a request is billed to, as providers tell: its key. */
export function accountOf(req: MockRequest): string {
  return req.headers['x-api-key'] ?? req.headers.authorization?.replace(/^Bearer\s+/i, '') ?? req.headers['x-goog-api-key'] ?? 'anonymous';
}

/** A prompt as a list of items whose equality decides cache hits: system first, then each message or input item. */
function promptItems(json: any): string[] {
  if (!json || typeof json !== 'object') return [];
  const items: string[] = [];
  const system = json.system ?? json.instructions ?? json.systemInstruction;
  if (system !== undefined) items.push(JSON.stringify(system));
  const list = Array.isArray(json.messages) ? json.messages : Array.isArray(json.contents) ? json.contents : Array.isArray(json.input) ? json.input : typeof json.input === 'string' ? [json.input] : [];
  for (const m of list) items.push(JSON.stringify(m));
  return items;
}

export function promptCache(options: { text?: (req: MockRequest) => string } = {}): PromptCache {
  const seen = new Map<string, string[][]>();
  const reads: PromptCache['reads'] = [];
  const handler = (req: MockRequest): Behavior | undefined => {
    if (!['openai.chat', 'openai.responses', 'anthropic.messages', 'gemini.generate', 'gemini.stream'].includes(req.endpoint)) return undefined;
    const account = accountOf(req);
    const items = promptItems(req.json);
    const before = seen.get(account) ?? [];
    let best = 0;
    for (const prompt of before) {
      let n = 0;
      // The last item of this request is new by definition (the turn being asked); only what precedes it can be cached.
      while (n < prompt.length && n < items.length - 1 && prompt[n] === items[n]) n++;
      if (n > best) best = n;
    }
    const input = inputTokensFor(req);
    let cached = 0;
    for (let i = 0; i < best; i++) cached += tokenCount(items[i]!);
    cached = Math.min(cached, input);
    before.push(items);
    seen.set(account, before);
    reads.push({ account, cached, input });
    return { type: 'text', text: options.text?.(req) ?? `answer ${req.index}`, usage: { inputTokens: input, cachedTokens: cached } };
  };
  return {
    handler,
    seen,
    reads,
    clear() {
      seen.clear();
      reads.length = 0;
    },
  };
}
