/**
 * How a request names its conversation under a combo's cache affinity (routing/conversation.ts): router's
 * own header first, then the client's markers in the CONTRACT's order, then (prefix mode only) a hash of the
 * first system and user content in each client format.
 */
import { describe, expect, it } from 'vitest';
import { ConversationAffinity, conversationOf, prefixId, ResponseChains } from '../../src/daemon/routing/conversation.js';

const headers = (h: Record<string, string>) => new Headers(h);
const none = headers({});

describe('conversationOf', () => {
  const chains = new ResponseChains();
  it('takes router’s header first (X-Router-Session-Id over X-Router-Session), as is', () => {
    const body = { metadata: { user_id: 'u' }, prompt_cache_key: 'k' };
    expect(conversationOf('session', headers({ 'x-router-session-id': 'abc', 'x-router-session': 'old' }), body, chains)).toBe('abc');
    expect(conversationOf('session', headers({ 'x-router-session': 'old' }), body, chains)).toBe('old');
  });
  it('then the client’s markers, each prefixed by where it came from', () => {
    expect(conversationOf('session', headers({ session_id: 's1', conversation_id: 'c1' }), {}, chains)).toBe('codex:s1');
    expect(conversationOf('session', headers({ conversation_id: 'c1' }), {}, chains)).toBe('codex:c1');
    expect(conversationOf('session', none, { metadata: { user_id: 'user_ab_account_cd_session_ef' }, prompt_cache_key: 'k' }, chains)).toBe('user:user_ab_account_cd_session_ef');
    expect(conversationOf('session', none, { previous_response_id: 'resp_1', prompt_cache_key: 'k' }, chains)).toBe('resp:resp_1');
    expect(conversationOf('session', none, { prompt_cache_key: 'k' }, chains)).toBe('cache:k');
  });
  it('follows a Responses chain to the conversation its first response started', () => {
    const aff = new ConversationAffinity();
    const conv = aff.noteResponse('combo', 'resp_1', undefined, { publicModel: 'openai/m', connectionId: 'c1' });
    expect(conv).toBe('resp:resp_1');
    aff.noteResponse('combo', 'resp_2', conv, { publicModel: 'openai/m', connectionId: 'c1' });
    expect(conversationOf('session', none, { previous_response_id: 'resp_2' }, aff.chains)).toBe('resp:resp_1');
    expect(aff.bound('combo', conv)).toBe('openai/m\u0000c1');
  });
  it('session mode stops there; prefix mode hashes the opening', () => {
    const body = { messages: [{ role: 'system', content: 'S' }, { role: 'user', content: 'U' }] };
    expect(conversationOf('session', none, body, chains)).toBeUndefined();
    expect(conversationOf('prefix', none, body, chains)).toMatch(/^prefix:[A-Za-z0-9_-]{22}$/);
  });
  it('cuts a long client id at 200 characters', () => {
    expect(conversationOf('session', headers({ 'x-router-session-id': 'x'.repeat(500) }), {}, chains)).toHaveLength(200);
  });
});

describe('prefixId', () => {
  it('is the same for the same opening in every client format, whatever follows', () => {
    const chat = prefixId({ messages: [{ role: 'system', content: 'S' }, { role: 'user', content: 'U' }, { role: 'assistant', content: 'A' }, { role: 'user', content: 'U2' }] });
    expect(prefixId({ messages: [{ role: 'system', content: 'S' }, { role: 'user', content: 'U' }] })).toBe(chat);
    expect(prefixId({ system: 'S', messages: [{ role: 'user', content: 'U' }] })).toBe(chat);
    expect(prefixId({ instructions: 'S', input: 'U' })).toBe(chat);
    expect(prefixId({ instructions: 'S', input: [{ type: 'message', role: 'user', content: 'U' }] })).toBe(chat);
  });
  it('differs when the opening differs; nothing to hash is no conversation', () => {
    const a = prefixId({ messages: [{ role: 'user', content: 'U' }] });
    expect(prefixId({ messages: [{ role: 'user', content: 'V' }] })).not.toBe(a);
    expect(prefixId({ contents: [{ role: 'user', parts: [{ text: 'U' }] }] })).toMatch(/^prefix:/);
    expect(prefixId({})).toBeUndefined();
  });
});
