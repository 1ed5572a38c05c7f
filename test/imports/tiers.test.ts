/**
 * Who may call the import routes, through the real route table in-process (`app.request` with
 * `remoteAddress`, as test/foundation/auth.test.ts plays remote callers). Routes that read this machine's
 * logins or run its credential-store tools are spawn tier: a non-loopback caller and a manage-scope key
 * are refused whatever else they carry; the CLI token and a dashboard session on loopback are let in.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bootServices, buildApp, closeServices } from '../../src/daemon/boot.js';
import type { Services } from '../../src/daemon/services.js';
import { claudeFile } from './fixtures.js';

const LO = '127.0.0.1';
const REMOTE = '203.0.113.7';

let state: string;
let userHome: string;
let services: Services;
let app: ReturnType<typeof buildApp>;
let manageKey: string;
let session: string;
const saved = { HOME: process.env.HOME, backend: process.env.ROUTER_KEYCHAIN_BACKEND };

beforeAll(async () => {
  state = mkdtempSync(join(tmpdir(), 'router-import-tier-'));
  userHome = mkdtempSync(join(tmpdir(), 'router-import-home-'));
  process.env.HOME = userHome;
  process.env.ROUTER_KEYCHAIN_BACKEND = 'none';
  const { mkdirSync, writeFileSync } = await import('node:fs');
  mkdirSync(join(userHome, '.claude'));
  writeFileSync(join(userHome, '.claude', '.credentials.json'), JSON.stringify(claudeFile('sk-ant-oat01-tier')));
  services = await bootServices({ home: state, host: LO, port: 0 });
  app = buildApp(services);
  manageKey = (await services.keys.create('manage-only', ['manage'])).key;
  session = (await services.sessions.create()).token;
});

afterAll(() => {
  if (services) closeServices(services);
  process.env.HOME = saved.HOME;
  if (saved.backend === undefined) delete process.env.ROUTER_KEYCHAIN_BACKEND;
  else process.env.ROUTER_KEYCHAIN_BACKEND = saved.backend;
  rmSync(state, { recursive: true, force: true });
  rmSync(userHome, { recursive: true, force: true });
});

type Caller = { addr: string; headers: Record<string, string> };
const callers = (): Record<string, Caller> => ({
  'cli@lo': { addr: LO, headers: { 'x-router-cli-token': services.cliToken } },
  'session@lo': { addr: LO, headers: { cookie: `auth_token=${session}` } },
  'managekey@lo': { addr: LO, headers: { authorization: `Bearer ${manageKey}` } },
  'managekey@remote': { addr: REMOTE, headers: { authorization: `Bearer ${manageKey}` } },
  'session@remote': { addr: REMOTE, headers: { cookie: `auth_token=${session}` } },
  'cli@remote': { addr: REMOTE, headers: { 'x-router-cli-token': services.cliToken } },
});

async function post(path: string, caller: Caller, body?: unknown) {
  const res = await app.request(
    `http://127.0.0.1${path}`,
    { method: 'POST', headers: { ...caller.headers, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) },
    { remoteAddress: caller.addr },
  );
  const text = await res.text();
  return { status: res.status, json: text ? JSON.parse(text) : undefined };
}

const SPAWN_ROUTES: Array<[string, unknown]> = [
  ['/api/providers/keychain/discover', undefined],
  ['/api/providers/keychain/import', { confirmedAccounts: [{ service: 'x', account: 'y', fingerprint: 'z' }] }],
  ['/api/providers/agy-auth/apply-local', undefined],
];

describe('spawn tier of the local-credential routes', () => {
  it.each(SPAWN_ROUTES)('%s: refused to remote callers and to manage-scope keys', async (path, body) => {
    const table: Record<string, number> = {};
    for (const [name, caller] of Object.entries(callers())) {
      const r = await post(path, caller, body);
      table[name] = r.status;
      if (r.status >= 400) expect(r.json.error).toMatchObject({ message: expect.any(String), type: expect.any(String), code: expect.any(String) });
    }
    const open = path.endsWith('apply-local') ? 404 : 200; // no agy login in this HOME: past the tier, the handler's 404
    expect(table).toEqual({
      'cli@lo': open,
      'session@lo': open,
      'managekey@lo': 403,
      'managekey@remote': 403,
      'session@remote': 403,
      'cli@remote': 403,
    });
  });

  it('a refused caller learns nothing about the accounts on this machine', async () => {
    const r = await post('/api/providers/keychain/discover', callers()['managekey@lo']!);
    expect(r.status).toBe(403);
    expect(JSON.stringify(r.json)).not.toContain('claude');
    const ok = await post('/api/providers/keychain/discover', callers()['cli@lo']!);
    expect(ok.json.accounts).toEqual([expect.objectContaining({ service: '~/.claude/.credentials.json', provider: 'claude-code' })]);
  });
});

describe('token-file routes (the file comes from the caller: management tier)', () => {
  it('a manage-scope key may upload token files; a proxy key may not', async () => {
    const proxyKey = (await services.keys.create('proxy-only', ['proxy'])).key;
    const bad = await post('/api/providers/agy-auth/import', { addr: REMOTE, headers: { authorization: `Bearer ${proxyKey}` } }, { token: {} });
    expect(bad.status).toBe(403);
    const r = await post('/api/providers/agy-auth/import', callers()['managekey@remote']!, { token: { refresh_token: 'x' } });
    expect(r.status).toBe(400);
    expect(r.json.error.message).toContain('access_token');
  });
});
