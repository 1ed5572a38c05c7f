/**
 * The session cookie over TLS: router itself listens on plain HTTP, but behind a TLS endpoint the request
 * URL is https and the cookie must then be Secure. Played in-process with an https request URL.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { bootServices, buildApp, closeServices } from '../../src/daemon/boot.js';
import type { Services } from '../../src/daemon/services.js';

let services: Services;
let home: string;

beforeAll(async () => {
  home = mkdtempSync(join(tmpdir(), 'router-cookie-'));
  services = await bootServices({ home, host: '127.0.0.1', port: 20128 });
  await services.passwords.set('tls-pass-1234');
});
afterAll(() => {
  closeServices(services);
  rmSync(home, { recursive: true, force: true });
});

async function login(url: string): Promise<string> {
  const app = buildApp(services);
  const res = await app.request(
    url,
    { method: 'POST', headers: { 'content-type': 'application/json', host: 'localhost:20128' }, body: JSON.stringify({ password: 'tls-pass-1234' }) },
    { remoteAddress: '127.0.0.1' } as never,
  );
  expect(res.status).toBe(200);
  return res.headers.get('set-cookie') ?? '';
}

it('is Secure when the request came over https, not over plain http; HttpOnly and SameSite=Strict both ways', async () => {
  const tls = await login('https://localhost:20128/api/auth/login');
  expect(tls).toMatch(/;\s*Secure/i);
  const plain = await login('http://localhost:20128/api/auth/login');
  expect(plain).not.toMatch(/;\s*Secure/i);
  for (const c of [tls, plain]) {
    expect(c).toMatch(/HttpOnly/i);
    expect(c).toMatch(/SameSite=Strict/i);
  }
});
