/**
 * Failures classified by scope, end to end (issue 28 item 2, issue 27 item 9): an account out of quota or
 * credit (402, OpenAI `insufficient_quota`, Anthropic's "credit balance is too low") or one that cannot use
 * the model (404 `model_not_found`) hands the request to the next account, or to the next combo target when
 * the provider has no other; a quota failure cools the whole account, every model; an account that answers
 * 5xx again and again is demoted behind the healthy ones instead of being tried first on every request.
 * The mock tells the accounts apart by the API key each request carries.
 */
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Behavior, MockRequest } from '../mocks/upstream.js';
import { chat, clearResilience, combo, content, script, setup, type Env } from './helpers.js';

let env: Env;
let conn1: string;

beforeAll(async () => {
  env = await setup({ providers: ['groq'] });
  conn1 = (await env.router.addConnection({ provider: 'openai', name: 'one', apiKey: 'sk-one', priority: 1, providerSpecificData: { baseUrl: env.mock.openaiBase } })).id;
  await env.router.addConnection({ provider: 'openai', name: 'two', apiKey: 'sk-two', priority: 2, providerSpecificData: { baseUrl: env.mock.openaiBase } });
  // groq has one account only: its failures can only be served by the combo's next target.
  await combo(env, { name: 'solo-then-next', strategy: 'priority', models: ['groq/g1', 'openai/next'] });
});
afterAll(async () => {
  await env?.stop();
});
beforeEach(() => script(env.mock));
afterEach(async () => {
  env.mock.reset();
  await clearResilience(env);
});

const account = (req: MockRequest) => (req.headers.authorization === 'Bearer sk-one' ? 'one' : req.headers.authorization === 'Bearer sk-two' ? 'two' : 'groq');
const accounts = (model: string) => env.mock.requests.filter((r) => r.endpoint === 'openai.chat' && r.model === model).map(account);
const onAccountOne = (b: Behavior) => (req: MockRequest) => (account(req) === 'one' ? b : undefined);

const QUOTA: Array<[string, Behavior]> = [
  ['HTTP 402', { type: 'status', status: 402, message: 'Payment required' }],
  ['OpenAI 429 insufficient_quota', { type: 'status', status: 429, code: 'insufficient_quota', errorType: 'insufficient_quota', message: 'You exceeded your current quota, please check your plan and billing details.' }],
  ['a 400 saying the credit balance is too low', { type: 'status', status: 400, errorType: 'invalid_request_error', message: 'Your credit balance is too low to access the Anthropic API. Please go to Plans & Billing to upgrade or purchase credits.' }],
];

describe('an account out of quota or credit', () => {
  for (const [name, behavior] of QUOTA) {
    it(`${name} on account one is served by account two, and cools account one for every model`, async () => {
      script(env.mock, { q: onAccountOne(behavior), 'q-other': onAccountOne(behavior) });
      const r = await chat(env, 'openai/q');
      expect(r.status, r.text).toBe(200);
      expect(content(r)).toBe('served by q');
      expect(accounts('q')).toEqual(['one', 'two']);
      // Account-wide: another model does not try account one at all.
      expect(content(await chat(env, 'openai/q-other'))).toBe('served by q-other');
      expect(accounts('q-other')).toEqual(['two']);
      const cooling = (await env.router.manage('GET', '/api/resilience/model-cooldowns')).json.cooldowns;
      expect(cooling).toEqual([expect.objectContaining({ connectionId: conn1, model: '*' })]);
      expect(cooling[0].remainingSeconds).toBeGreaterThan(60);
    });
  }

  it('a 402 from the only account of a provider is served by the next combo target', async () => {
    script(env.mock, { g1: { type: 'status', status: 402, message: 'Insufficient credits' } });
    const r = await chat(env, 'solo-then-next');
    expect(r.status, r.text).toBe(200);
    expect(content(r)).toBe('served by next');
    expect(accounts('g1')).toEqual(['groq']);
  });

  it('a request the client got wrong (400) still ends at the first account', async () => {
    script(env.mock, { bad: onAccountOne({ type: 'status', status: 400, message: "Invalid value for 'temperature'." }) });
    const r = await chat(env, 'openai/bad');
    expect(r.status).toBe(400);
    expect(accounts('bad')).toEqual(['one']);
  });
});

describe('a model this account cannot use', () => {
  it('404 model_not_found on account one is served by account two; account one goes last for that model only', async () => {
    const denied: Behavior = { type: 'status', status: 404, code: 'model_not_found', errorType: 'invalid_request_error', message: 'The model `m` does not exist or you do not have access to it.' };
    script(env.mock, { m: onAccountOne(denied) });
    expect(content(await chat(env, 'openai/m'))).toBe('served by m');
    expect(content(await chat(env, 'openai/m'))).toBe('served by m');
    expect(accounts('m')).toEqual(['one', 'two', 'two']);
    expect(content(await chat(env, 'openai/m-other'))).toBe('served by m-other');
    expect(accounts('m-other')).toEqual(['one']);
    const demoted = (await env.router.manage('GET', '/api/resilience')).json.demoted;
    expect(demoted).toEqual([expect.objectContaining({ connectionId: conn1, model: 'm' })]);
  });

  it('a 404 naming the model on the only target is passed to the client', async () => {
    script(env.mock, { gone: { type: 'status', status: 404, code: 'model_not_found', message: 'The model `gone` does not exist or you do not have access to it.' } });
    const r = await chat(env, 'groq/gone');
    expect(r.status).toBe(404);
    expect(r.json.error.message).toMatch(/does not exist/);
  });
});

describe('a dead account (issue 27 item 9)', () => {
  it('an account answering 500 every time is demoted after 3 failures: later requests go to the healthy account first', async () => {
    script(env.mock, { d: onAccountOne({ type: 'status', status: 500, message: 'internal error' }) });
    for (let i = 0; i < 6; i++) expect((await chat(env, 'openai/d')).status).toBe(200);
    // Three failovers, then account one is no longer tried first (fill-first would otherwise call it each time).
    expect(accounts('d')).toEqual(['one', 'two', 'one', 'two', 'one', 'two', 'two', 'two', 'two']);
    const demoted = (await env.router.manage('GET', '/api/resilience')).json.demoted;
    expect(demoted).toEqual([expect.objectContaining({ connectionId: conn1, model: 'd', failures: 3 })]);
  });

  it('a demoted account is still tried when the healthy one fails, and a success restores its place', async () => {
    let oneDown = true;
    script(env.mock, {
      e: (req) => (account(req) === 'one' ? (oneDown ? { type: 'status', status: 503 } : undefined) : oneDown ? undefined : { type: 'status', status: 500 }),
    });
    for (let i = 0; i < 3; i++) await chat(env, 'openai/e');
    expect(accounts('e').slice(-2)).toEqual(['one', 'two']);
    oneDown = false;
    // Now two fails: one (demoted, tried second) serves, which ends its streak.
    expect(content(await chat(env, 'openai/e'))).toBe('served by e');
    expect(accounts('e').slice(-2)).toEqual(['two', 'one']);
    expect((await env.router.manage('GET', '/api/resilience')).json.demoted).toEqual([]);
  });
});
