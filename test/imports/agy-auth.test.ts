/**
 * Antigravity token-file import routes, in-process through the real route table: unsafe archives (zip-slip,
 * oversized entries, zip bombs, too many entries) and malformed token files are refused with a 400 before
 * anything is stored.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { strToU8, zipSync } from 'fflate';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bootServices, buildApp, closeServices } from '../../src/daemon/boot.js';
import type { Services } from '../../src/daemon/services.js';

let state: string;
let services: Services;
let app: ReturnType<typeof buildApp>;

beforeAll(async () => {
  state = mkdtempSync(join(tmpdir(), 'router-agy-'));
  services = await bootServices({ home: state, host: '127.0.0.1', port: 0 });
  app = buildApp(services);
});

afterAll(() => {
  if (services) closeServices(services);
  rmSync(state, { recursive: true, force: true });
});

const agyToken = (n: number) => ({
  token: { access_token: `ya29.agy-${n}`, token_type: 'Bearer', refresh_token: `1//agy-${n}`, expiry: '2030-07-06T10:09:19.638+09:00' },
  auth_method: 'consumer',
});

async function send(path: string, body: BodyInit, type = 'application/json') {
  const res = await app.request(
    `http://127.0.0.1${path}`,
    { method: 'POST', headers: { 'x-router-cli-token': services.cliToken, 'content-type': type }, body },
    { remoteAddress: '127.0.0.1' },
  );
  const text = await res.text();
  return { status: res.status, json: text ? JSON.parse(text) : undefined };
}

const zip = (files: Parameters<typeof zipSync>[0]) => send('/api/providers/agy-auth/zip-extract', Buffer.from(zipSync(files)), 'application/zip');

function expectRefused(r: { status: number; json: any }, text: string) {
  expect(r.status, JSON.stringify(r.json)).toBe(400);
  expect(r.json.error.message).toContain(text);
  expect(services.connections.list()).toHaveLength(0);
}

describe('zip-extract refuses unsafe archives with 400', () => {
  it('zip-slip paths', async () => {
    expectRefused(await zip({ 'ok.json': strToU8(JSON.stringify(agyToken(1))), '../../escape.json': strToU8(JSON.stringify(agyToken(2))) }), '".." is not allowed');
    expectRefused(await zip({ '/etc/cron.d/x.json': strToU8('{}') }), 'absolute paths');
  });

  it('an entry over the size limit', async () => {
    expectRefused(await zip({ 'big.json': strToU8(`{"pad":"${'x'.repeat(300 * 1024)}"}`) }), 'expands beyond');
  });

  it('a zip bomb whose header claims a tiny size', async () => {
    const bomb = Buffer.from(zipSync({ 'bomb.json': [new Uint8Array(40_000_000), { level: 9 }] }));
    const end = bomb.lastIndexOf(Buffer.from([0x50, 0x4b, 0x05, 0x06]));
    bomb.writeUInt32LE(64, bomb.readUInt32LE(end + 16) + 24);
    expectRefused(await send('/api/providers/agy-auth/zip-extract', bomb, 'application/zip'), 'expands beyond');
  });

  it('too many entries', async () => {
    const files: Record<string, Uint8Array> = {};
    for (let i = 0; i < 201; i++) files[`t${i}.json`] = strToU8('{}');
    expectRefused(await zip(files), '201 entries');
  });

  it('garbage, archives without token files and entries that are not JSON', async () => {
    expectRefused(await send('/api/providers/agy-auth/zip-extract', Buffer.from('definitely not a zip archive'), 'application/zip'), 'Not a zip');
    expectRefused(await zip({ 'README.txt': strToU8('hello') }), 'no token files');
    expectRefused(await zip({ 'a.json': strToU8('{"token": ') }), 'not a JSON token file');
    expectRefused(await zip({ 'a.json': strToU8('{"token": {"refresh_token": "r"}}') }), 'a.json: The credential file has no access_token');
  });

  it('a body over 10 MiB (413) and a body that is not an archive type (415)', async () => {
    const big = await send('/api/providers/agy-auth/zip-extract', Buffer.alloc(10 * 1024 * 1024 + 1), 'application/zip');
    expect(big.status).toBe(413);
    const form = await send('/api/providers/agy-auth/zip-extract', 'a=b', 'application/x-www-form-urlencoded');
    expect(form.status).toBe(415);
  });
});

describe('import and import-bulk validate every file before storing any', () => {
  it('refuses a token file without an access token', async () => {
    expectRefused(await send('/api/providers/agy-auth/import', JSON.stringify({ token: { refresh_token: 'r' } })), 'access_token');
  });

  it('one bad file in a bulk import imports nothing, and names the file', async () => {
    const r = await send('/api/providers/agy-auth/import-bulk', JSON.stringify({ files: [agyToken(1), { nothing: true }] }));
    expectRefused(r, 'files[1]');
    expect(r.json.error.param).toBe('files');
    expectRefused(await send('/api/providers/agy-auth/import-bulk', JSON.stringify({ files: [] })), 'files');
  });
});
