/**
 * Cache affinity (issue 30 item 1), end to end: a real daemon in front of a mock whose prompt cache is
 * kept per account (test/mocks/prompt-cache.ts), two accounts of one provider rotated round-robin. The
 * same conversations are sent through a combo without affinity and through combos with `session` and
 * `prefix` affinity; GET /api/sessions/{id} reports the accounts each used and its cached share, and
 * /metrics the cached share per account and per combo. Affinity also holds a combo target against the
 * combo's own rotation, and moves a conversation only when its account fails, then stays on the new one.
 */
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { accountOf, promptCache } from '../mocks/prompt-cache.js';
import { clearResilience, combo, settings, setup, until, type Env } from '../resilience/helpers.js';

let env: Env;
// Long answers, as a coding agent's turns are: most of a prompt is the conversation's own history.
const cache = promptCache({ text: (req) => `answer ${req.index}: ${'Here is the next part of the work, in detail. '.repeat(30)}` });
const SYSTEM = 'You are a careful assistant.';

beforeAll(async () => {
  env = await setup({ providers: ['groq'] });
  await env.router.addConnection({ provider: 'openai', name: 'one', apiKey: 'sk-one', providerSpecificData: { baseUrl: env.mock.openaiBase } });
  await env.router.addConnection({ provider: 'openai', name: 'two', apiKey: 'sk-two', providerSpecificData: { baseUrl: env.mock.openaiBase } });
  await settings(env, { accountStrategy: 'round-robin' });
  await combo(env, { name: 'plain', models: ['openai/m'] });
  await combo(env, { name: 'sticky', models: ['openai/m'], affinity: 'session' });
  await combo(env, { name: 'by-prefix', models: ['openai/m'], affinity: 'prefix' });
  // Two providers rotated by the combo itself: affinity must hold the target too.
  await combo(env, { name: 'rotating', strategy: 'round-robin', models: ['openai/m', 'groq/m'], affinity: 'session' });
});
afterAll(async () => {
  await env?.stop();
});
beforeEach(() => {
  cache.clear();
  env.mock.handle(cache.handler);
});
afterEach(async () => {
  env.mock.reset();
  await clearResilience(env);
});

interface Turn {
  status: number;
  trace: string | null;
  text: string;
}

async function send(model: string, messages: unknown[], extra: { headers?: Record<string, string>; body?: Record<string, unknown> } = {}): Promise<Turn> {
  const res = await fetch(`${env.router.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${env.key}`, 'content-type': 'application/json', ...extra.headers },
    body: JSON.stringify({ model, messages, ...extra.body }),
  });
  const json = (await res.json()) as any;
  return { status: res.status, trace: res.headers.get('x-router-trace-id'), text: json?.choices?.[0]?.message?.content ?? '' };
}

/**
 * Three conversations of four turns each, interleaved turn by turn (as concurrent users are); each turn
 * sends the whole history. `marker(c)` is how conversation c identifies itself.
 */
async function conversations(model: string, marker: (c: number) => { headers?: Record<string, string>; body?: Record<string, unknown> }, count = 3, turns = 6): Promise<string[][]> {
  const history = Array.from({ length: count }, (_, c) => [{ role: 'system', content: SYSTEM }, { role: 'user', content: `Conversation ${c}: tell me about topic ${c}. ${'Some context. '.repeat(20)}` }] as any[]);
  const accounts: string[][] = Array.from({ length: count }, () => []);
  for (let t = 0; t < turns; t++) {
    for (let c = 0; c < count; c++) {
      const before = env.mock.requests.length;
      const r = await send(model, history[c]!, marker(c));
      expect(r.status, r.text).toBe(200);
      accounts[c]!.push(accountOf(env.mock.requests[before]!));
      history[c]!.push({ role: 'assistant', content: r.text }, { role: 'user', content: `Turn ${t + 1}: go on about topic ${c}.` });
    }
  }
  return accounts;
}

/** Cached share of all input tokens the mock saw. */
const share = () => {
  const input = cache.reads.reduce((n, r) => n + r.input, 0);
  return cache.reads.reduce((n, r) => n + r.cached, 0) / input;
};

describe('cache affinity', () => {
  it('without affinity a pool rotates conversations over accounts and loses the cache; with it each stays on one account', async () => {
    const marker = (c: number) => ({ body: { prompt_cache_key: `conv-${c}` } });
    const off = await conversations('plain', marker);
    const offShare = share();
    for (const seq of off) expect(new Set(seq).size).toBe(2);

    cache.clear();
    const on = await conversations('sticky', marker);
    const onShare = share();
    console.log(`cached share: without affinity ${offShare.toFixed(3)}, with ${onShare.toFixed(3)}`);
    for (const seq of on) expect(new Set(seq).size).toBe(1);
    // Turn one of each conversation is cold either way; after it, every turn reads its history from the cache.
    expect(onShare).toBeGreaterThan(0.6);
    expect(onShare - offShare).toBeGreaterThan(0.2);

    // The session report: the client's marker names the session, one account, its cached share.
    const s = await until(async () => {
      const r = await env.router.manage('GET', '/api/sessions/cache%3Aconv-1');
      return r.status === 200 && r.json.requests.length === 6 ? r.json : undefined;
    });
    expect(s.accountsUsed).toBe(1);
    expect(s.accounts).toHaveLength(1);
    expect(s.accounts[0]).toMatchObject({ provider: 'openai', requests: 6 });
    expect(['one', 'two']).toContain(s.accounts[0].name);
    expect(s.cachedShare).toBeGreaterThan(0.6);
    expect(s.cacheReadTokens).toBe(s.requests.reduce((n: number, r: any) => n + r.cacheReadTokens, 0));
    const listed = (await env.router.manage('GET', '/api/sessions?q=conv-1')).json.sessions as any[];
    expect(listed.find((x) => x.sessionId === 'cache:conv-1')).toMatchObject({ accountsUsed: 1, cacheReadTokens: s.cacheReadTokens });

    // /metrics: cached share per combo and per account.
    const metrics = await fetch(`${env.router.url}/metrics`, { headers: { 'x-router-cli-token': env.router.cliToken } }).then((r) => r.text());
    const gauge = (scope: string, name: string) => Number(new RegExp(`router_cached_input_share\\{scope="${scope}",name="${name.replace('/', '\\/')}"\\} ([0-9.e-]+)`).exec(metrics)?.[1]);
    expect(gauge('combo', 'sticky')).toBeGreaterThan(0.6);
    expect(gauge('combo', 'plain')).toBeLessThan(gauge('combo', 'sticky'));
    expect(gauge('account', 'openai/one')).toBeGreaterThan(0);
    expect(metrics).toMatch(/router_prompt_tokens_total\{scope="combo",name="sticky",kind="cache_read"\} [1-9]/);
  });

  it('prefix affinity recognizes a conversation by its first system and user content, with no marker at all', async () => {
    const off = await conversations('plain', () => ({}));
    for (const seq of off) expect(new Set(seq).size).toBe(2);
    cache.clear();
    const on = await conversations('by-prefix', () => ({}));
    for (const seq of on) expect(new Set(seq).size).toBe(1);
    expect(share()).toBeGreaterThan(0.6);
  });

  it('session affinity holds the combo target too, whatever the combo strategy rotates', async () => {
    const marker = (c: number) => ({ headers: { 'x-router-session-id': `rot-${c}` } });
    const seqs = await conversations('rotating', marker, 3, 4);
    const served = (c: number) => env.mock.requests.filter((r) => r.json?.messages?.[1]?.content?.startsWith(`Conversation ${c}:`)).map((r) => accountOf(r));
    for (let c = 0; c < 3; c++) {
      expect(new Set(seqs[c]).size).toBe(1);
      expect(new Set(served(c)).size).toBe(1);
    }
    // The rotation did run: the conversations did not all land on one target.
    expect(new Set(seqs.map((s) => s[0])).size).toBeGreaterThan(1);
  });

  it('a conversation moves only when its account fails, then stays on the new one', async () => {
    const headers = { 'x-router-session-id': 'mover' };
    const history: any[] = [{ role: 'system', content: SYSTEM }, { role: 'user', content: 'Conversation mover: hello.' }];
    const turn = async () => {
      const before = env.mock.requests.length;
      const r = await send('sticky', history, { headers });
      expect(r.status, r.text).toBe(200);
      history.push({ role: 'assistant', content: r.text }, { role: 'user', content: `more ${history.length}` });
      return env.mock.requests.slice(before).map(accountOf);
    };
    const [first] = await turn();
    expect(await turn()).toEqual([first]);
    // Its account answers 429 once: the turn fails over to the other account...
    const other = first === 'sk-one' ? 'sk-two' : 'sk-one';
    let refused = false;
    const off = env.mock.handle((req) => (accountOf(req) === first && !refused ? ((refused = true), { type: 'status', status: 429, headers: { 'retry-after': '1' } }) : undefined));
    expect(await turn()).toEqual([first, other]);
    off();
    // ...and stays there once the first account is usable again (its cooldown cleared).
    await clearResilience(env);
    expect(await turn()).toEqual([other]);
    expect(await turn()).toEqual([other]);
  });

  it('a Responses previous_response_id chain is one conversation: every turn goes to the account that holds the stored response', async () => {
    const chain = async (model: string) => {
      const accounts: string[] = [];
      let previous: string | undefined;
      for (let t = 0; t < 4; t++) {
        const before = env.mock.requests.length;
        const res = await fetch(`${env.router.url}/v1/responses`, {
          method: 'POST',
          headers: { authorization: `Bearer ${env.key}`, 'content-type': 'application/json' },
          body: JSON.stringify({ model, input: `turn ${t}`, ...(previous ? { previous_response_id: previous } : {}) }),
        });
        const json = (await res.json()) as any;
        expect(res.status, JSON.stringify(json)).toBe(200);
        expect(json.id).toMatch(/^resp_/);
        previous = json.id;
        accounts.push(accountOf(env.mock.requests[before]!));
      }
      return { accounts, last: previous! };
    };
    expect(new Set((await chain('plain')).accounts).size).toBe(2);
    const sticky = await chain('sticky');
    expect(new Set(sticky.accounts).size).toBe(1);
    // The conversation is named after its first response; the log groups all four turns under it.
    const logs = (await env.router.manage('GET', '/api/logs?limit=20')).json.logs as any[];
    const ids = new Set(logs.filter((l) => l.combo === 'sticky' && l.endpoint === '/v1/responses').map((l) => l.sessionId));
    expect(ids.size).toBe(1);
    expect([...ids][0]).toMatch(/^resp:resp_/);
  });

  it('an unknown affinity mode is a 400 naming the field', async () => {
    const r = await env.router.manage('POST', '/api/combos', { name: 'bad-affinity', models: ['openai/m'], affinity: 'sticky' });
    expect(r.status).toBe(400);
    expect(JSON.stringify(r.json)).toContain('affinity');
  });
});
