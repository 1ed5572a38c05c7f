/**
 * `router login <provider>` in browser mode, automated (issue 18 item 6): the real CLI against the real daemon,
 * with `BROWSER` pointing at a fake browser. The fake does what a browser does with the login URL: it asks the
 * mock authorization server, which redirects (the user "agreed") to router's loopback callback listener, and
 * follows that redirect. The CLI must end with the connection created. Without a callback the CLI gives up at
 * its --timeout, exits non-zero with a clear message, and the daemon's listener is closed at once.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mockEndpoints, startOAuthMock, type OAuthMock } from '../mocks/oauth.js';
import { startRouter, type RouterProcess } from '../support/router-daemon.js';
import { describeResult, freePort, runRouter } from '../support/cli.js';

let router: RouterProcess;
let oauth: OAuthMock;
let target: string[];

/** A browser that follows the consent redirect to the callback listener and records what it saw. */
const FOLLOWING_BROWSER = `
import { writeFileSync } from 'node:fs';
const url = process.argv[2];
const consent = await fetch(url, { redirect: 'manual' });
const callback = new URL(consent.headers.get('location'));
// A browser tries every address of localhost; router's listener is on 127.0.0.1.
if (callback.hostname === 'localhost') callback.hostname = '127.0.0.1';
const page = await fetch(callback);
writeFileSync(process.env.FAKE_BROWSER_LOG, JSON.stringify({ url, callback: callback.href, status: page.status, body: await page.text() }));
`;

/** A browser whose user never logs in: it only records the URL it was opened with. */
const IDLE_BROWSER = `
import { writeFileSync } from 'node:fs';
writeFileSync(process.env.FAKE_BROWSER_LOG, JSON.stringify({ url: process.argv[2] }));
`;

function browser(name: string, script: string): { env: Record<string, string>; seen: () => Record<string, any> } {
  const file = join(router.home, `${name}.mjs`);
  const log = join(router.home, `${name}.log`);
  writeFileSync(file, script);
  return { env: { BROWSER: `${process.execPath} ${file}`, FAKE_BROWSER_LOG: log }, seen: () => JSON.parse(readFileSync(log, 'utf8')) };
}

beforeAll(async () => {
  oauth = await startOAuthMock();
  router = await startRouter();
  target = ['--home', router.home, '--port', String(router.port)];
  const r = await router.manage('PATCH', '/api/settings', { oauthEndpoints: { 'claude-code': mockEndpoints(oauth) } });
  expect(r.status).toBe(200);
});

afterAll(async () => {
  await router?.stop();
  await oauth?.close();
});

describe('router login <provider> in browser mode', () => {
  it('opens $BROWSER with the login URL; the redirect reaches the listener and the CLI ends with the connection', async () => {
    const port = await freePort();
    const b = browser('following', FOLLOWING_BROWSER);
    const r = await runRouter(['login', 'claude-code', '--callback-port', String(port), '--timeout', '20', ...target], { env: b.env, timeoutMs: 30_000 });
    expect(r.exitCode, describeResult(r)).toBe(0);
    expect(r.stdout).toMatch(/logged in: claude-code connection '.+' \((.+)\)/);
    const id = /\(([^)]+)\)\s*$/.exec(r.stdout.trim())![1]!;
    const seen = b.seen();
    expect(new URL(seen.url).origin).toBe(oauth.url);
    expect(new URL(seen.url).searchParams.get('redirect_uri')).toBe(`http://localhost:${port}/callback`);
    expect(seen.callback).toMatch(new RegExp(`^http://127\\.0\\.0\\.1:${port}/callback\\?code=`));
    expect(seen.status).toBe(200);
    expect(seen.body).toContain('Logged in');
    const conn = await router.manage('GET', `/api/providers/${id}`);
    expect(conn.status).toBe(200);
    expect(conn.json).toMatchObject({ provider: 'claude-code', authKind: 'oauth', isActive: true });
    // The code was exchanged with the PKCE verifier (the mock checks it) and the listener is gone.
    expect(oauth.requests.some((q) => q.path === '/token' && q.fields.grant_type === 'authorization_code')).toBe(true);
    await expect(fetch(`http://127.0.0.1:${port}/callback`)).rejects.toThrow();
  });

  it('without a callback it exits 1 at --timeout with a clear message, and the listener is closed at once', async () => {
    const port = await freePort();
    const b = browser('idle', IDLE_BROWSER);
    const started = Date.now();
    const r = await runRouter(['login', 'claude-code', '--callback-port', String(port), '--timeout', '2', ...target], { env: b.env, timeoutMs: 30_000 });
    expect(r.exitCode, describeResult(r)).toBe(1);
    expect(Date.now() - started).toBeLessThan(15_000);
    expect(r.stderr).toContain(`no browser came back to http://localhost:${port}/callback within 2 s`);
    expect(r.stderr).toContain('listener closed');
    const state = new URL(b.seen().url).searchParams.get('state')!;
    // Closed now, not at the login's 5-minute expiry: the port refuses, and the login is forgotten.
    await expect(fetch(`http://127.0.0.1:${port}/callback?state=${state}&code=late`)).rejects.toThrow();
    const poll = await router.manage('POST', '/api/oauth/claude-code/poll-callback', { state });
    expect(poll.status).toBe(400);
  });

  it('cancel of an unknown login answers {cancelled: false}; a bad port is refused by the CLI', async () => {
    const c = await router.manage('POST', '/api/oauth/claude-code/cancel', { state: 'no-such-login' });
    expect(c).toEqual({ status: 200, json: { cancelled: false } });
    const r = await runRouter(['login', 'claude-code', '--callback-port', '80', ...target]);
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain('--callback-port');
  });
});
