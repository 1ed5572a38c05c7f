import { describe, expect, it } from 'vitest';
import { fitRequest, turnStarts } from '../../src/daemon/compression/fit.js';
import { promptBudget } from '../../src/daemon/compression/stage.js';
import { compressionSettingsSchema } from '../../src/daemon/compression/settings.js';
import { estimateTokens } from '../../src/daemon/proxy/count-tokens.js';
import { RouterError } from '../../src/daemon/http/errors.js';
import type { IrMessage, IrRequest } from '../../src/daemon/translate/ir.js';

/** About `n` tokens of distinct words. */
const words = (n: number, seed = 'w') => Array.from({ length: n }, (_, i) => `${seed}${i % 97}`).join(' ');
const user = (text: string): IrMessage => ({ role: 'user', parts: [{ type: 'text', text }] });
const assistant = (text: string): IrMessage => ({ role: 'assistant', parts: [{ type: 'text', text }] });
const call = (id: string): IrMessage => ({ role: 'assistant', parts: [{ type: 'tool_call', id, name: 'read_file', arguments: '{"path":"a.txt"}' }] });
const result = (id: string, text: string): IrMessage => ({ role: 'tool', parts: [{ type: 'tool_result', toolCallId: id, content: [{ type: 'text', text }] }] });
const req = (messages: IrMessage[]): IrRequest => ({ model: 'm', stream: false, system: [{ type: 'text', text: 'You are terse.' }], messages });
const opts = (budget: number) => ({ budget, toolOutputMaxTokens: 100, model: 'tiny/tiny-1', contextLength: budget });

describe('turns', () => {
  it('a turn opens at a user message; tool results and assistant replies belong to it', () => {
    expect(turnStarts([user('a'), call('1'), result('1', 'x'), assistant('b'), user('c'), assistant('d'), user('e')])).toEqual([0, 4, 6]);
    expect(turnStarts([assistant('prefix'), user('a'), assistant('b')])).toEqual([0, 1]);
    // Anthropic-style tool results in a user message do not open a turn.
    const toolInUser: IrMessage = { role: 'user', parts: [{ type: 'tool_result', toolCallId: '1', content: [] }] };
    expect(turnStarts([user('a'), call('1'), toolInUser, user('b')])).toEqual([0, 3]);
  });
});

describe('fitRequest', () => {
  it('leaves a request that fits untouched', async () => {
    const ir = req([user('hello')]);
    const r = await fitRequest(ir, opts(1000));
    expect(r.request).toBe(ir);
    expect(r).toMatchObject({ trimmedToolOutputs: 0, droppedTurns: 0 });
  });

  it('trims oversized tool outputs first (head and tail kept, marker between)', async () => {
    const big = `HEAD-MARK ${words(2000)} TAIL-MARK`;
    const ir = req([user('read it'), call('c1'), result('c1', big), assistant('done'), user('summarize')]);
    const r = await fitRequest(ir, opts(600));
    expect(r).toMatchObject({ trimmedToolOutputs: 1, droppedTurns: 0 });
    expect(r.tokensAfter).toBeLessThanOrEqual(600);
    expect(r.tokensBefore).toBeGreaterThan(2000);
    const text = (r.request.messages[2]!.parts[0] as any).content[0].text as string;
    expect(text.startsWith('HEAD-MARK')).toBe(true);
    expect(text.endsWith('TAIL-MARK')).toBe(true);
    expect(text).toMatch(/\[\.\.\. \d+ tokens of tool output trimmed by router \.\.\.\]/);
    expect(r.request.messages).toHaveLength(5);
    // The input request is not mutated (it is reused for failover targets).
    expect((ir.messages[2]!.parts[0] as any).content[0].text).toBe(big);
  });

  it('then drops the oldest turns, whole: never the system prompt, the last user turn, or half a tool exchange', async () => {
    const turns: IrMessage[] = [];
    for (let t = 0; t < 8; t++) {
      turns.push(user(words(120, `u${t}x`)));
      if (t === 5) turns.push(call(`c${t}`), result(`c${t}`, words(50, 'r')));
      turns.push(assistant(words(120, `a${t}x`)));
    }
    const ir = req([...turns, user('LAST QUESTION')]);
    const r = await fitRequest(ir, opts(900));
    expect(r.droppedTurns).toBeGreaterThan(0);
    expect(r.tokensAfter).toBeLessThanOrEqual(900);
    expect(r.tokensAfter).toBe(await estimateTokens(r.request));
    const kept = r.request.messages;
    expect(kept[0]!.role).toBe('user');
    expect(kept.at(-1)).toEqual(user('LAST QUESTION'));
    expect(r.request.system).toEqual(ir.system);
    const ids = (role: string, type: string) =>
      kept.filter((m) => m.role === role).flatMap((m) => m.parts.filter((p: any) => p.type === type).map((p: any) => p.id ?? p.toolCallId));
    expect(ids('assistant', 'tool_call')).toEqual(ids('tool', 'tool_result'));
    // The oldest turns went first: what is left is a suffix of the conversation.
    expect(ir.messages.slice(ir.messages.length - kept.length)).toEqual(kept);
  });

  it('throws context_length_exceeded when the system prompt and the last user turn alone do not fit', async () => {
    const ir = req([user('old'), assistant('reply'), user(words(1500))]);
    const err = await fitRequest(ir, opts(500)).catch((e) => e);
    expect(err).toBeInstanceOf(RouterError);
    expect(err).toMatchObject({ status: 400, code: 'context_length_exceeded' });
    expect(err.message).toContain('tiny/tiny-1');
  });

  it('budget keeps room for the reply (capped at half the context) and a safety margin', () => {
    const s = compressionSettingsSchema.parse({ reserveOutputTokens: 100, safetyMarginPercent: 10 });
    expect(promptBudget(1000, undefined, s)).toBe(800);
    expect(promptBudget(1000, 50, s)).toBe(850);
    expect(promptBudget(1000, 100_000, s)).toBe(400);
  });
});
