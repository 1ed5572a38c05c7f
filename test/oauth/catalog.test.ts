/**
 * GET /api/oauth/providers (in-process): every OAuth provider with the login its definition offers, which the
 * dashboard's Providers page reads to show "Log in" (browser or device code) or only "Import token".
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { bootServices, buildApp, closeServices } from '../../src/daemon/boot.js';
import { Logger } from '../../src/daemon/logger.js';
import { OAUTH_PROVIDER_IDS } from '../../src/daemon/oauth/settings.js';
import type { Services } from '../../src/daemon/services.js';

let home: string;
let services: Services;
let app: ReturnType<typeof buildApp>;

beforeAll(async () => {
  home = mkdtempSync(join(tmpdir(), 'router-oauth-cat-'));
  services = await bootServices({ home, host: '127.0.0.1', port: 0, log: new Logger() });
  app = buildApp(services);
});
afterAll(() => {
  if (services) closeServices(services);
  rmSync(home, { recursive: true, force: true });
});

it('lists each OAuth provider with its login: browser (loopback callback), device code, or import only', async () => {
  const res = await app.request('http://router.test/api/oauth/providers', { headers: { 'x-router-cli-token': services.cliToken } }, { remoteAddress: '127.0.0.1' });
  expect(res.status).toBe(200);
  const { providers } = (await res.json()) as { providers: Array<{ id: string; name: string; login: string | null; paste: boolean; retired: boolean }> };
  expect(providers.map((p) => p.id)).toEqual([...OAUTH_PROVIDER_IDS]);
  const by = Object.fromEntries(providers.map((p) => [p.id, p]));
  for (const id of ['claude-code', 'codex', 'gemini-cli', 'antigravity']) expect(by[id], id).toMatchObject({ login: 'browser', retired: false });
  for (const id of ['github-copilot', 'qwen-code']) expect(by[id], id).toMatchObject({ login: 'device', paste: false, retired: false });
  for (const id of ['windsurf', 'devin-cli']) expect(by[id], id).toMatchObject({ login: null, paste: false, retired: true });
  // Claude's login can also end on its console page showing the code to paste (authorize + exchange).
  expect(by['claude-code']!.paste).toBe(true);
  expect(by.codex!.paste).toBe(false);
  expect(by.codex!.name).toBe(services.providers.provider('codex')!.name);
});

it('is a management route', async () => {
  const res = await app.request('http://router.test/api/oauth/providers', {}, { remoteAddress: '203.0.113.9' });
  expect(res.status).toBe(401);
});
