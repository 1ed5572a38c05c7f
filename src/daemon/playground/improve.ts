import { RouterError } from '../http/errors.js';
import type { RouteContext } from '../http/routes.js';
import { runChat } from '../proxy/chat.js';
import type { ImproveBody } from './schema.js';

export const IMPROVE_ENDPOINT = '/api/playground/improve-prompt';

export interface Improved {
  improvedSystem: string;
  improvedPrompt: string;
  tokensIn: number;
  tokensOut: number;
}

const TONE: Record<ImproveBody['tone'], string> = {
  concise: 'Keep the improved texts concise: no longer than they need to be.',
  detailed: 'Make the improved texts detailed: add structure, context, constraints and an output format where they help.',
};

/** The system instruction of the improvement call. */
export function improveInstruction(tone: ImproveBody['tone']): string {
  return [
    'You are an expert prompt engineer. You are given a system prompt and/or a user prompt written for a language model.',
    'Rewrite them so a model follows them more reliably: state the intent, constraints and expected output explicitly and remove ambiguity.',
    "Keep the author's meaning, language and any placeholders (such as {{name}}) unchanged. Do not answer or carry out the prompts.",
    TONE[tone],
    'Reply with only a JSON object, without code fences or commentary: {"improvedSystem": "...", "improvedPrompt": "..."}.',
    'Use an empty string for a part you were not given.',
  ].join('\n');
}

/** The Chat Completions body the improvement is asked with (non-streaming, the caller's model). */
export function improveRequest(body: ImproveBody): Record<string, unknown> {
  const given = JSON.stringify({ system: body.system ?? '', prompt: body.prompt ?? '' }, null, 2);
  return {
    model: body.model,
    stream: false,
    messages: [
      { role: 'system', content: improveInstruction(body.tone) },
      { role: 'user', content: `Improve these prompts (JSON; an empty string means not given):\n${given}` },
    ],
  };
}

/** JSON objects the reply may hold: the whole text, a fenced block, or the outermost braces. */
function jsonCandidates(text: string): string[] {
  const out = [text.trim()];
  const fence = /```(?:json)?\s*([\s\S]*?)```/i.exec(text);
  if (fence?.[1]) out.push(fence[1].trim());
  const first = text.indexOf('{');
  const last = text.lastIndexOf('}');
  if (first >= 0 && last > first) out.push(text.slice(first, last + 1));
  return out;
}

/**
 * Reads the model's answer: the first candidate that parses to an object with `improvedSystem` or
 * `improvedPrompt` strings; a part it lacks keeps the caller's original. Anything else falls back to the
 * raw text as the improved prompt (and the original system prompt).
 */
export function parseImproved(text: string, body: Pick<ImproveBody, 'system' | 'prompt'>): Pick<Improved, 'improvedSystem' | 'improvedPrompt'> {
  for (const candidate of jsonCandidates(text)) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(candidate);
    } catch {
      continue;
    }
    if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) continue;
    const { improvedSystem, improvedPrompt } = parsed as Record<string, unknown>;
    if (typeof improvedSystem !== 'string' && typeof improvedPrompt !== 'string') continue;
    return {
      improvedSystem: typeof improvedSystem === 'string' ? improvedSystem : (body.system ?? ''),
      improvedPrompt: typeof improvedPrompt === 'string' ? improvedPrompt : (body.prompt ?? ''),
    };
  }
  return { improvedSystem: body.system ?? '', improvedPrompt: text.trim() };
}

interface ChatReply {
  choices?: Array<{ message?: { content?: unknown; refusal?: unknown } }>;
  usage?: { prompt_tokens?: number; completion_tokens?: number };
}

/**
 * Improves a prompt through router's own Chat Completions pipeline, in process: the caller's key, model
 * scopes, quotas and usage apply as for any proxied call. An upstream error reply is passed through.
 */
export async function improvePrompt(ctx: RouteContext, body: ImproveBody): Promise<Improved | Response> {
  const raw = improveRequest(body);
  // No sink: runChat answers with a Response this code reads.
  const res = (await runChat(ctx, { clientFormat: 'openai-chat', raw, model: body.model, stream: false, endpoint: IMPROVE_ENDPOINT })) as Response;
  if (res.status !== 200) return res;
  let reply: ChatReply;
  try {
    reply = (await res.json()) as ChatReply;
  } catch {
    throw new RouterError(502, 'The model reply could not be read.');
  }
  const message = reply.choices?.[0]?.message;
  const text = typeof message?.content === 'string' ? message.content : '';
  if (!text.trim()) {
    const refusal = typeof message?.refusal === 'string' ? `: it refused (${message.refusal.slice(0, 500)})` : '.';
    throw new RouterError(502, `The model returned no text${refusal}`);
  }
  return {
    ...parseImproved(text, body),
    tokensIn: reply.usage?.prompt_tokens ?? 0,
    tokensOut: reply.usage?.completion_tokens ?? 0,
  };
}
