/**
 * A real browser on the same machine as the daemon: Debian's Chromium, driven by playwright-core (no
 * browser download; `.ci/run` installs the package when missing). Hostile pages served from another port
 * of 127.0.0.1 and from `localhost` try what any web page can do without a CORS preflight, and a page
 * whose host name resolves to 127.0.0.1 (DNS rebinding, played with Chromium's host resolver rules) tries
 * to read and write as router's own origin. Everything is refused, with requireLogin off and on (on: the
 * owner's browser holds a valid session cookie, which same-site pages send along).
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRouter, type RouterProcess } from '../support/router-daemon.js';

const CHROMIUM = ['/usr/bin/chromium', '/usr/bin/chromium-browser'].find((p) => existsSync(p));
if (!CHROMIUM) console.warn('test/http/browser-guard.test.ts skipped: Chromium is not installed (`apt-get install -y chromium`; .ci/run does it)');

const REBIND_HOST = 'rebind.test';
const PASSWORD = 'owner-password-123';

let router: RouterProcess;
let attacker: Server;
let attackerPort: number;
let context: BrowserContext;
let profile: string;

/** The hostile site: a blank page on every path; the attacks run as that page's scripts. */
function startAttacker(): Promise<Server> {
  const server = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end('<!doctype html><title>hostile page</title><body>hello</body>');
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

async function keyNames(): Promise<string[]> {
  const r = await router.manage<{ keys: { name: string }[] }>('GET', '/api/keys');
  return r.json.keys.map((k) => k.name);
}

async function routerAlive(): Promise<boolean> {
  return fetch(`${router.url}/api/health`).then((r) => r.ok, () => false);
}

/** What a page can send cross-origin without a preflight: no-cors, text/plain (parameter "x=json"), cookies. */
async function noCorsKeyCreate(page: Page, name: string): Promise<void> {
  await page.evaluate(
    async ({ url, name }) => {
      await fetch(`${url}/api/keys`, {
        method: 'POST',
        mode: 'no-cors',
        credentials: 'include',
        headers: { 'content-type': 'text/plain; x=json' },
        body: JSON.stringify({ name, scopes: ['proxy', 'manage'] }),
      }).catch(() => undefined);
    },
    { url: router.url, name },
  );
}

/**
 * A plain HTML form posted to /api/system/shutdown. It targets a frame of the page, so the page itself does
 * not navigate away (a navigation still running when the test moves on made the next goto hang).
 */
async function formShutdown(page: Page): Promise<number | undefined> {
  const reply = page.waitForResponse((r) => r.url().endsWith('/api/system/shutdown'), { timeout: 10_000 }).catch(() => undefined);
  await page.evaluate((url) => {
    const sink = document.createElement('iframe');
    sink.name = 'sink';
    document.body.append(sink);
    const form = document.createElement('form');
    form.method = 'POST';
    form.target = 'sink';
    form.action = `${url}/api/system/shutdown`;
    form.enctype = 'text/plain';
    const input = document.createElement('input');
    input.name = '{"a":"';
    input.value = '"}';
    form.append(input);
    document.body.append(form);
    form.submit();
  }, router.url);
  return (await reply)?.status();
}

const pageOrigins = () => [`http://127.0.0.1:${attackerPort}`, `http://localhost:${attackerPort}`];

/** A free loopback port (bound and released). */
function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer();
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as AddressInfo;
      s.close(() => resolve(port));
    });
  });
}

/** Whether something accepts connections on 127.0.0.1:`port`. */
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

/**
 * GET routes that change state or start work (route flag `sideEffects`): what a page can fire at them
 * without a preflight (an image, a no-cors fetch, a plain cors fetch), with the status the browser saw.
 */
async function sideEffectGets(page: Page, port: number): Promise<Record<string, number[]>> {
  const paths = [
    `/api/oauth/claude-code/start-callback-server?port=${port}`,
    '/api/oauth/claude-code/authorize',
    '/api/oauth/github-copilot/device-code',
    '/api/memory/health',
    '/api/db-backups/export',
    '/api/tools/agent-bridge/state',
  ];
  const out: Record<string, number[]> = {};
  for (const path of paths) {
    const url = `${router.url}${path}`;
    const seen: number[] = [];
    const onResponse = (r: import('playwright-core').Response) => {
      if (r.url() === url) seen.push(r.status());
    };
    page.on('response', onResponse);
    await page.evaluate(async (u) => {
      await new Promise<void>((resolve) => {
        const img = new Image();
        img.onload = img.onerror = () => resolve();
        img.src = u;
      });
      await fetch(u, { mode: 'no-cors', credentials: 'include' }).catch(() => undefined);
      await fetch(u, { credentials: 'include' }).catch(() => undefined);
    }, url);
    // Chromium reports one response per URL here however many of the three went out: all must be refused.
    const deadline = Date.now() + 5000;
    while (seen.length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    page.off('response', onResponse);
    out[path.replace(/\?.*/, '')] = seen;
  }
  return out;
}

describe.skipIf(!CHROMIUM)('a web page in Chromium cannot drive router', () => {
  beforeAll(async () => {
    [router, attacker] = await Promise.all([startRouter(), startAttacker()]);
    attackerPort = (attacker.address() as AddressInfo).port;
    expect((await router.manage('PUT', '/api/auth/password', { password: PASSWORD })).status).toBe(204);
    profile = mkdtempSync(join(tmpdir(), 'router-chromium-'));
    context = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM,
      headless: true,
      args: [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
        // DNS rebinding, played locally: this name resolves to the daemon's loopback address.
        `--host-resolver-rules=MAP ${REBIND_HOST} 127.0.0.1`,
      ],
    });
  }, 60_000);

  afterAll(async () => {
    await context?.close().catch(() => undefined);
    await router?.stop();
    await new Promise((r) => attacker?.close(r));
    if (profile) rmSync(profile, { recursive: true, force: true });
  });

  for (const requireLogin of [false, true]) {
    describe(`requireLogin ${requireLogin}`, () => {
      beforeAll(async () => {
        expect((await router.manage('PATCH', '/api/settings', { requireLogin })).status).toBe(200);
        await context.clearCookies();
        if (requireLogin) {
          // The owner is logged in: the browser holds router's session cookie (SameSite=Strict), which pages
          // on any other port of 127.0.0.1 still send, since they are the same site.
          const login = await fetch(`${router.url}/api/auth/login`, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ password: PASSWORD }),
          });
          expect(login.status).toBe(200);
          const token = /auth_token=([^;]+)/.exec(login.headers.get('set-cookie') ?? '')![1]!;
          await context.addCookies([{ name: 'auth_token', value: token, domain: '127.0.0.1', path: '/', httpOnly: true, sameSite: 'Strict' }]);
        }
      });

      it('a no-cors text/plain POST from another local port or from localhost creates no key', async () => {
        const page = await context.newPage();
        try {
          for (const [i, origin] of pageOrigins().entries()) {
            await page.goto(`${origin}/keys`);
            await noCorsKeyCreate(page, `pwned-${requireLogin}-${i}`);
          }
        } finally {
          await page.close();
        }
        expect((await keyNames()).filter((n) => n.startsWith('pwned'))).toEqual([]);
      });

      it('GETs with side effects from another local port or from localhost are refused and bind no listener', async () => {
        for (const origin of pageOrigins()) {
          const page = await context.newPage();
          try {
            await page.goto(`${origin}/gets`);
            const port = await freePort();
            const statuses = await sideEffectGets(page, port);
            for (const [path, seen] of Object.entries(statuses)) {
              expect(seen.length, `${origin} ${path}`).toBeGreaterThan(0);
              expect(new Set(seen), `${origin} ${path}`).toEqual(new Set([403]));
            }
            expect(await listening(port), origin).toBe(false);
          } finally {
            await page.close();
          }
        }
      });

      it('a DNS-rebinding page can neither read nor write as router (Host refused)', async () => {
        const page = await context.newPage();
        try {
          const port = new URL(router.url).port;
          await page.goto(`http://${REBIND_HOST}:${port}/api/health`);
          // The attacker's script, running as http://rebind.test:<port>: same origin, so JSON and reads work.
          const result = await page.evaluate(async (name) => {
            const read = await fetch('/api/keys');
            const write = await fetch('/api/keys', {
              method: 'POST',
              headers: { 'content-type': 'application/json' },
              body: JSON.stringify({ name, scopes: ['manage'] }),
            });
            return { read: read.status, readBody: await read.text(), write: write.status };
          }, `pwned-rebind-${requireLogin}`);
          expect(result.read).toBe(403);
          expect(result.readBody).toMatch(/Host 'rebind\.test:\d+' is not allowed/);
          expect(result.write).toBe(403);
        } finally {
          await page.close();
        }
        expect((await keyNames()).filter((n) => n.startsWith('pwned'))).toEqual([]);
      });

      it('a form POST to /api/system/shutdown from another local port or from localhost is refused', async () => {
        // One page per origin: the form's own navigation (to router's 403 page) may still be running when
        // the next goto starts, which Chromium reports as an interrupted navigation.
        for (const origin of pageOrigins()) {
          const page = await context.newPage();
          try {
            await page.goto(`${origin}/form`, { waitUntil: 'domcontentloaded' });
            const status = await formShutdown(page);
            expect(status, origin).toBe(403);
            expect(await routerAlive(), origin).toBe(true);
          } finally {
            await page.close();
          }
        }
      });
    });
  }

  it("router's own origin still works from the browser (same-origin JSON with the session)", async () => {
    const page = await context.newPage();
    try {
      await page.goto(`${router.url}/api/health`);
      const port = await freePort();
      const status = await page.evaluate(async (port) => {
        const r = await fetch('/api/resilience/reset', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
        // The dashboard's own login start: a same-origin GET of a side-effect route binds its listener.
        const start = await fetch(`/api/oauth/claude-code/start-callback-server?port=${port}`);
        const { state } = await start.json();
        const bound = start.status;
        return { reset: r.status, bound, state };
      }, port);
      expect(status.reset).toBe(200);
      expect(status.bound).toBe(200);
      expect(await listening(port)).toBe(true);
      await page.evaluate(async (state) => {
        await fetch('/api/oauth/claude-code/cancel', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ state }) });
      }, status.state);
    } finally {
      await page.close();
    }
  });
});
