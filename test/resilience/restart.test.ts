/**
 * Resilience state across a graceful daemon restart on the same state folder: open circuits stay open
 * (same end time), circuits whose open period ended meanwhile come back half-open (the first request
 * probes), live cooldowns stay, expired ones are gone.
 */
import { rmSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { startMockUpstream, type MockUpstream } from '../mocks/upstream.js';
import { chat, content, script, settings, setup, sleep, type Env } from './helpers.js';

let mock: MockUpstream;
let env: Env | undefined;
let home: string | undefined;

afterAll(async () => {
  await env?.stop();
  await mock?.close();
  if (home) rmSync(home, { recursive: true, force: true });
});

describe('state survives a graceful restart', () => {
  it('open breakers and live cooldowns are restored; expired ones are dropped', async () => {
    mock = await startMockUpstream();
    env = await setup({ providers: ['openai', 'groq', 'deepseek'], keepHome: true, mock });
    home = env.router.home;
    // The short windows (groq's cooldown and breaker) are opened last, right before they are read, and the
    // restart waits for their recorded end, not a fixed time: the test holds on a loaded machine too.
    const SHORT_MS = 3000;
    const LONG_S = 600;
    script(mock, {
      down: { type: 'status', status: 500 },
      limited: { type: 'status', status: 429, headers: { 'retry-after': String(LONG_S) } },
      brief: { type: 'status', status: 429, headers: { 'retry-after': String(SHORT_MS / 1000) } },
    });
    await settings(env, { breakerFailureThreshold: 1, breakerCooldownMs: LONG_S * 1000 });

    // Long ones (outlast any restart): deepseek/limited cooling, openai's breaker open.
    expect((await chat(env, 'deepseek/limited')).status).toBe(429);
    expect((await chat(env, 'openai/down')).status).toBe(500);
    // Both keys again: PATCH /api/settings currently resets the keys it does not name to their defaults.
    await settings(env, { breakerFailureThreshold: 1, breakerCooldownMs: SHORT_MS });
    // Short ones: groq's breaker and groq/brief's cooldown, over by the time the daemon is back.
    expect((await chat(env, 'groq/brief')).status).toBe(429);
    expect((await chat(env, 'groq/down')).status).toBe(500);

    const before = (await env.router.manage('GET', '/api/resilience')).json;
    const openaiBefore = before.breakers.find((b: any) => b.provider === 'openai');
    expect(openaiBefore).toMatchObject({ state: 'open', consecutiveFailures: 1 });
    const groqBefore = before.breakers.find((b: any) => b.provider === 'groq');
    expect(groqBefore).toMatchObject({ state: 'open' });
    expect(before.cooldowns.map((c: any) => c.model).sort()).toEqual(['brief', 'limited']);
    const limitedBefore = before.cooldowns.find((c: any) => c.model === 'limited');
    const briefBefore = before.cooldowns.find((c: any) => c.model === 'brief');
    const shortEnd = Math.max(new Date(groqBefore.openUntil).getTime(), new Date(briefBefore.until).getTime());

    await env.stop();
    env = undefined;
    await sleep(Math.max(0, shortEnd - Date.now() + 100));
    env = await setup({ home, mock });
    mock.reset();
    script(mock);

    const after = (await env.router.manage('GET', '/api/resilience')).json;
    const openaiAfter = after.breakers.find((b: any) => b.provider === 'openai');
    expect(openaiAfter).toMatchObject({ state: 'open', consecutiveFailures: 1, openUntil: openaiBefore.openUntil });
    expect(after.breakers.find((b: any) => b.provider === 'groq')).toMatchObject({ state: 'half-open' });
    // Same end times as before the restart (not restarted from the restart's time).
    expect(after.cooldowns).toEqual([expect.objectContaining({ model: 'limited', until: limitedBefore.until, remainingSeconds: expect.any(Number) })]);
    expect(after.cooldowns[0].remainingSeconds).toBeGreaterThan(0);
    // The settings came back too.
    expect(after.settings).toMatchObject({ failureThreshold: 1, cooldownMs: SHORT_MS });

    // Behavior matches: openai still refused without a call, deepseek/limited still cooling, groq probes and closes.
    const sentAt = Date.now();
    const refused = await chat(env, 'openai/down');
    const answeredAt = Date.now();
    expect(refused.status).toBe(503);
    expect(refused.json.error).toMatchObject({ code: 'provider_circuit_open', provider: 'openai' });
    // Retry-After counts down to the restored open period's end, as seen between sending and the answer.
    const retryAfter = Number(refused.headers.get('retry-after'));
    const openaiEnd = new Date(openaiBefore.openUntil).getTime();
    expect(retryAfter).toBeGreaterThanOrEqual(Math.floor((openaiEnd - answeredAt) / 1000));
    expect(retryAfter).toBeLessThanOrEqual(Math.ceil((openaiEnd - sentAt) / 1000));
    const cooling = await chat(env, 'deepseek/limited');
    expect(cooling.status).toBe(429);
    expect(cooling.json.error).toMatchObject({ code: 'model_cooldown', model: 'deepseek/limited' });
    expect(content(await chat(env, 'groq/down'))).toBe('served by down');
    expect(content(await chat(env, 'groq/brief'))).toBe('served by brief');
    expect(mock.requests.filter((r) => r.endpoint === 'openai.chat').map((r) => r.model)).toEqual(['down', 'brief']);
    const final = (await env.router.manage('GET', '/api/resilience')).json;
    expect(final.breakers.map((b: any) => b.provider)).toEqual(['openai']);
  }, 120_000); // two daemon starts
});
