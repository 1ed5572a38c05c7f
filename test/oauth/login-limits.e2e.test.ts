/**
 * Bounds on logins in progress (issue 27 items 5 and 6), against the real daemon: at most
 * MAX_CALLBACK_LISTENERS loopback listeners are open at once (the next is a 429 and binds nothing; a retry
 * on its own port replaces the earlier listener; a cancel frees a slot), at most MAX_PENDING_LOGINS logins
 * are pending, and the `authorize` reply carries only what the client needs (never the PKCE verifier).
 */
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRouter, type RouterProcess } from '../support/router-daemon.js';
import { freePort } from '../support/cli.js';

const MAX_CALLBACK_LISTENERS = 4;
const MAX_PENDING_LOGINS = 32;

let router: RouterProcess;

beforeAll(async () => {
  router = await startRouter();
});
afterAll(async () => {
  await router?.stop();
});

function listening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const sock = connect(port, '127.0.0.1');
    sock.once('connect', () => {
      sock.destroy();
      resolve(true);
    });
    sock.once('error', () => resolve(false));
  });
}

const start = (provider: string, port: number) => router.manage('GET', `/api/oauth/${provider}/start-callback-server?port=${port}`);
const cancel = (provider: string, state: string) => router.manage('POST', `/api/oauth/${provider}/cancel`, { state });

describe('logins in progress are bounded', () => {
  it(`${MAX_CALLBACK_LISTENERS} callback listeners open at once; the next is refused and binds nothing`, async () => {
    const providers = ['claude-code', 'codex', 'gemini-cli', 'antigravity'];
    const open: Array<{ provider: string; port: number; state: string }> = [];
    for (const provider of providers) {
      const port = await freePort();
      const r = await start(provider, port);
      expect(r.status, JSON.stringify(r.json)).toBe(200);
      open.push({ provider, port, state: r.json.state });
      expect(await listening(port)).toBe(true);
    }
    const extra = await freePort();
    const refused = await start('claude-code', extra);
    expect(refused.status).toBe(429);
    expect(refused.json.error).toMatchObject({ code: 'too_many_listeners', type: expect.any(String), message: expect.stringMatching(/4 login listeners/) });
    expect(await listening(extra)).toBe(false);

    // A retry of a login on its own port replaces the earlier listener (still 4 open).
    const first = open[0]!;
    const retry = await start(first.provider, first.port);
    expect(retry.status, JSON.stringify(retry.json)).toBe(200);
    expect(await listening(first.port)).toBe(true);
    const old = await router.manage('POST', `/api/oauth/${first.provider}/poll-callback`, { state: first.state });
    expect(old.status).toBe(400);
    first.state = retry.json.state;

    // Cancelling one frees its slot and its port.
    expect((await cancel(open[1]!.provider, open[1]!.state)).json).toEqual({ cancelled: true });
    expect(await listening(open[1]!.port)).toBe(false);
    const now = await start('claude-code', extra);
    expect(now.status, JSON.stringify(now.json)).toBe(200);
    expect(await listening(extra)).toBe(true);

    for (const o of [open[0]!, open[2]!, open[3]!]) await cancel(o.provider, o.state);
    await cancel('claude-code', now.json.state);
  });

  it('the authorize reply holds the login URL, state and redirect URI, never the PKCE verifier', async () => {
    const r = await router.manage('GET', '/api/oauth/claude-code/authorize');
    expect(r.status).toBe(200);
    expect(Object.keys(r.json).sort()).toEqual(['authUrl', 'redirectUri', 'state']);
    expect(JSON.stringify(r.json)).not.toMatch(/verifier/i);
    expect(new URL(r.json.authUrl).searchParams.get('code_challenge_method')).toBe('S256');
    await cancel('claude-code', r.json.state);
  });

  it(`at most ${MAX_PENDING_LOGINS} logins are pending; the next is a 429 until one ends`, async () => {
    const states: string[] = [];
    for (let i = 0; i < MAX_PENDING_LOGINS; i++) {
      const r = await router.manage('GET', '/api/oauth/claude-code/authorize');
      expect(r.status, `login ${i}`).toBe(200);
      states.push(r.json.state);
    }
    const over = await router.manage('GET', '/api/oauth/claude-code/authorize');
    expect(over.status).toBe(429);
    expect(over.json.error.code).toBe('too_many_logins');
    await cancel('claude-code', states.pop()!);
    expect((await router.manage('GET', '/api/oauth/claude-code/authorize')).status).toBe(200);
  });
});
