import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { join } from 'node:path';
import { createClient, type FileStat, type WebDAVClient } from 'webdav';
import { startRouter, type RouterProcess } from '../support/router-daemon.js';

/** The note vault in the real daemon: credentials over the management API, notes over WebDAV. */
let router: RouterProcess;
let dav: WebDAVClient;
const USER = 'obsidian';
const PASS = 'vault-password-0123';
const basic = (u: string, p: string) => `Basic ${Buffer.from(`${u}:${p}`).toString('base64')}`;
const davUrl = () => `${router.url}/api/v1/webdav`;

beforeAll(async () => {
  router = await startRouter();
  dav = createClient(davUrl(), { username: USER, password: PASS });
});
afterAll(async () => {
  await router?.stop();
});

describe('note vault over WebDAV', () => {
  it('is closed (404) until credentials are set; GET settings never shows the password, which is stored encrypted', async () => {
    expect((await fetch(`${davUrl()}/`, { method: 'PROPFIND', headers: { depth: '1', authorization: basic(USER, PASS) } })).status).toBe(404);
    expect((await router.manage('GET', '/api/settings/obsidian/webdav')).json).toEqual({ username: null, enabled: false, passwordSet: false });
    expect((await router.manage('POST', '/api/settings/obsidian/webdav', { username: USER })).status).toBe(400);
    const set = await router.manage('POST', '/api/settings/obsidian/webdav', { username: USER, password: PASS, enabled: true });
    expect(set.status).toBe(200);
    expect(set.json).toEqual({ username: USER, enabled: true, passwordSet: true });
    const got = await router.manage('GET', '/api/settings/obsidian/webdav');
    expect(got.json).toEqual({ username: USER, enabled: true, passwordSet: true });
    expect(JSON.stringify(got.json)).not.toContain(PASS);
    // The management route is not open without a credential.
    expect((await fetch(`${router.url}/api/settings/obsidian/webdav`)).status).toBe(401);
    // At rest: the database file holds no plain password (WAL flushed by the write; check both files).
    const files = ['router.db', 'router.db-wal'].map((f) => {
      try {
        return readFileSync(join(router.home, f)).toString('latin1');
      } catch {
        return '';
      }
    });
    expect(files.join('')).not.toContain(PASS);
  });

  it('answers OPTIONS with DAV: 1 and refuses wrong credentials with 401 and a Basic challenge', async () => {
    const opt = await fetch(`${davUrl()}/`, { method: 'OPTIONS', headers: { authorization: basic(USER, PASS) } });
    expect(opt.status).toBe(200);
    expect(opt.headers.get('dav')).toBe('1');
    expect(opt.headers.get('allow')).toContain('PROPFIND');
    for (const auth of [basic(USER, 'wrong-password'), basic('someone', PASS), basic(USER, `${PASS}x`), basic(USER, ''), 'Bearer abc', null]) {
      const r = await fetch(`${davUrl()}/`, { method: 'PROPFIND', headers: { depth: '1', ...(auth ? { authorization: auth } : {}) } });
      expect(r.status).toBe(401);
      expect(r.headers.get('www-authenticate')).toMatch(/^Basic realm="router vault"/);
    }
  });

  it('the webdav client lists, reads, writes, moves and deletes notes that are memories', async () => {
    const m = await router.manage('POST', '/api/memory', { key: 'coffee', content: 'The user drinks espresso.', type: 'factual', metadata: { source: 'test' } });
    expect(m.status).toBe(201);
    const root = (await dav.getDirectoryContents('/')) as FileStat[];
    expect(root.map((f) => f.basename).sort()).toEqual(['episodic', 'factual', 'procedural', 'semantic']);
    expect(root.every((f) => f.type === 'directory')).toBe(true);
    const factual = (await dav.getDirectoryContents('/factual')) as FileStat[];
    expect(factual.map((f) => f.basename)).toEqual(['coffee.md']);
    const note = (await dav.getFileContents('/factual/coffee.md', { format: 'text' })) as string;
    expect(note).toMatch(/^---\n/);
    expect(note).toContain(`id: ${m.json.id}`);
    expect(note).toContain('key: coffee');
    expect(note).toContain('type: factual');
    expect(note).toContain('source: test');
    expect(note.endsWith('---\nThe user drinks espresso.\n')).toBe(true);
    expect(factual[0]!.size).toBe(Buffer.byteLength(note));

    // Editing the note updates the memory.
    await dav.putFileContents('/factual/coffee.md', note.replace('espresso', 'flat whites'));
    expect((await router.manage('GET', `/api/memory/${m.json.id}`)).json).toMatchObject({ key: 'coffee', content: 'The user drinks flat whites.', metadata: { source: 'test' } });

    // A new note creates a memory keyed by its file name.
    await dav.putFileContents('/procedural/deploy steps.md', 'Run the migrations, then restart the zanzibar service.\n');
    const listed = await router.manage('GET', '/api/memory?type=procedural');
    expect(listed.json.data).toHaveLength(1);
    expect(listed.json.data[0]).toMatchObject({ key: 'deploy steps', content: 'Run the migrations, then restart the zanzibar service.', apiKeyId: null });
    const id = listed.json.data[0].id as string;

    // MOVE renames (the key) and moves between type folders.
    await dav.moveFile('/procedural/deploy steps.md', '/semantic/release.md');
    expect((await router.manage('GET', `/api/memory/${id}`)).json).toMatchObject({ key: 'release', type: 'semantic' });
    expect(await dav.exists('/procedural/deploy steps.md')).toBe(false);
    expect(((await dav.stat('/semantic/release.md')) as FileStat).type).toBe('file');

    // DELETE deletes the memory.
    await dav.deleteFile('/semantic/release.md');
    expect((await router.manage('GET', `/api/memory/${id}`)).status).toBe(404);
    expect(await dav.exists('/semantic/release.md')).toBe(false);
  });

  it('a note written over WebDAV is found by /api/memory search and by exact (FTS) retrieval: the index follows', async () => {
    const put = await fetch(`${davUrl()}/episodic/trip.md`, {
      method: 'PUT',
      headers: { authorization: basic(USER, PASS), 'content-type': 'text/markdown' },
      body: '---\nmetadata:\n  place: Lisbon\n---\nThe user visited the quokkaland aquarium last spring.\n',
    });
    expect(put.status).toBe(201);
    const search = await router.manage('GET', '/api/memory?q=quokkaland');
    expect(search.json.data).toHaveLength(1);
    expect(search.json.data[0]).toMatchObject({ key: 'trip', type: 'episodic', metadata: { place: 'Lisbon' } });
    const preview = await router.manage('POST', '/api/memory/retrieve-preview', { query: 'quokkaland aquarium', strategy: 'exact' });
    expect(preview.status).toBe(200);
    expect(preview.json.memories.map((m: { id: string }) => m.id)).toContain(search.json.data[0].id);
    // Edited over WebDAV: the old words are no longer found, the new ones are.
    await fetch(`${davUrl()}/episodic/trip.md`, { method: 'PUT', headers: { authorization: basic(USER, PASS) }, body: 'The user visited the wombatorium instead.\n' });
    const after = await router.manage('POST', '/api/memory/retrieve-preview', { query: 'wombatorium', strategy: 'exact' });
    expect(after.json.memories.map((m: { id: string }) => m.id)).toContain(search.json.data[0].id);
    const old = await router.manage('POST', '/api/memory/retrieve-preview', { query: 'quokkaland', strategy: 'exact' });
    expect(old.json.memories).toHaveLength(0);
  });

  it("keeps a note's own front matter (title, tags) and writes it back; router's own fields stay router's (issue 27 item 7)", async () => {
    const written = ['---', 'title: Trip to Lisbon', 'tags:', '  - travel', '  - food', 'aliases: [lisbon]', 'id: not-the-real-id', 'metadata:', '  place: Lisbon', '---', 'Pasteis de nata at Belem.', ''].join('\n');
    const put = await fetch(`${davUrl()}/episodic/lisbon.md`, { method: 'PUT', headers: { authorization: basic(USER, PASS) }, body: written });
    expect(put.status).toBe(201);
    const mem = (await router.manage('GET', '/api/memory?type=episodic')).json.data.find((m: { key: string }) => m.key === 'lisbon');
    expect(mem).toMatchObject({ content: 'Pasteis de nata at Belem.', metadata: { place: 'Lisbon', frontMatter: { title: 'Trip to Lisbon', tags: ['travel', 'food'], aliases: ['lisbon'] } } });
    const note = (await dav.getFileContents('/episodic/lisbon.md', { format: 'text' })) as string;
    const front = note.slice(4, note.indexOf('\n---\n'));
    expect(front).toContain(`id: ${mem.id}`);
    expect(front).not.toContain('not-the-real-id');
    expect(front).toContain('title: Trip to Lisbon');
    expect(front).toMatch(/^tags:\n {2}- travel\n {2}- food$/m);
    expect(front).toMatch(/^metadata:\n {2}place: Lisbon$/m);
    expect(front).not.toContain('frontMatter');
    // Edited in the editor: the fields follow the note (a tag added, the alias removed), the metadata stays.
    const edited = note.replace('  - food\n', '  - food\n  - pastry\n').replace(/^aliases:\n(?: {2}- .*\n)+/m, '');
    expect(edited).not.toContain('aliases');
    expect((await fetch(`${davUrl()}/episodic/lisbon.md`, { method: 'PUT', headers: { authorization: basic(USER, PASS) }, body: edited })).status).toBe(204);
    const after = (await router.manage('GET', `/api/memory/${mem.id}`)).json;
    expect(after.metadata).toEqual({ place: 'Lisbon', frontMatter: { title: 'Trip to Lisbon', tags: ['travel', 'food', 'pastry'] } });
    expect(await dav.getFileContents('/episodic/lisbon.md', { format: 'text' })).toContain('  - pastry\n');
  });

  it('PROPFIND with fetch: Depth 0 and 1 answer 207 multistatus with hrefs and the properties', async () => {
    const r1 = await fetch(`${davUrl()}/factual/`, { method: 'PROPFIND', headers: { depth: '1', authorization: basic(USER, PASS) } });
    expect(r1.status).toBe(207);
    expect(r1.headers.get('content-type')).toContain('xml');
    const xml = await r1.text();
    expect(xml).toContain('<d:href>/api/v1/webdav/factual/</d:href>');
    expect(xml).toContain('<d:href>/api/v1/webdav/factual/coffee.md</d:href>');
    for (const p of ['getlastmodified', 'getcontentlength', 'getetag', 'resourcetype', 'displayname']) expect(xml).toContain(`<d:${p}`);
    const r0 = await fetch(`${davUrl()}/factual/`, { method: 'PROPFIND', headers: { depth: '0', authorization: basic(USER, PASS) } });
    expect(r0.status).toBe(207);
    const xml0 = await r0.text();
    expect(xml0).toContain('<d:href>/api/v1/webdav/factual/</d:href>');
    expect(xml0).not.toContain('coffee.md');
    const missing = await fetch(`${davUrl()}/factual/nothing.md`, { method: 'PROPFIND', headers: { depth: '0', authorization: basic(USER, PASS) } });
    expect(missing.status).toBe(404);
  });

  it('honours If-Match / If-None-Match on writes, Overwrite: F on MOVE, and MKCOL of an existing folder', async () => {
    const auth = { authorization: basic(USER, PASS) };
    const url = `${davUrl()}/factual/coffee.md`;
    const etag = (await fetch(url, { headers: auth })).headers.get('etag')!;
    expect(etag).toMatch(/^".+"$/);
    expect((await fetch(url, { method: 'PUT', headers: { ...auth, 'if-match': '"stale"' }, body: 'Not written.\n' })).status).toBe(412);
    expect((await fetch(url, { method: 'PUT', headers: { ...auth, 'if-none-match': '*' }, body: 'Not written.\n' })).status).toBe(412);
    expect((await fetch(url, { method: 'DELETE', headers: { ...auth, 'if-match': '"stale"' } })).status).toBe(412);
    const ok = await fetch(url, { method: 'PUT', headers: { ...auth, 'if-match': etag }, body: 'The user drinks espresso again.\n' });
    expect(ok.status).toBe(204);
    expect(ok.headers.get('etag')).not.toBe(etag);
    expect((await fetch(url, { headers: auth })).headers.get('etag')).toBe(ok.headers.get('etag'));
    expect((await router.manage('GET', '/api/memory?q=again')).json.data[0]).toMatchObject({ key: 'coffee', content: 'The user drinks espresso again.' });
    // MOVE onto an existing note with Overwrite: F is refused; nothing changes.
    expect((await fetch(`${davUrl()}/semantic/tea.md`, { method: 'PUT', headers: auth, body: 'The user likes green tea.\n' })).status).toBe(201);
    const move = await fetch(url, { method: 'MOVE', headers: { ...auth, destination: `${davUrl()}/semantic/tea.md`, overwrite: 'F' } });
    expect(move.status).toBe(412);
    expect((await router.manage('GET', '/api/memory?q=green%20tea')).json.data).toHaveLength(1);
    expect((await fetch(`${davUrl()}/semantic/tea.md`, { method: 'DELETE', headers: auth })).status).toBe(204);
    expect((await fetch(`${davUrl()}/factual`, { method: 'MKCOL', headers: auth })).status).toBe(405);
  });

  it('refuses path traversal, other folders and oversized notes', async () => {
    const auth = { authorization: basic(USER, PASS) };
    for (const p of ['/..%2f..%2fetc/passwd', '/%252e%252e/%252e%252e/etc/passwd', '/factual/..%2f..%2fsecret.md', '/factual/a%5c..%5cb.md', '/factual/a%00.md', '/%2fetc%2fpasswd', '/factual/%2e%2e%252fx.md']) {
      for (const method of ['GET', 'PROPFIND', 'PUT', 'DELETE']) {
        const r = await fetch(`${davUrl()}${p}`, { method, headers: { ...auth, depth: '0' }, body: method === 'PUT' ? 'x' : undefined });
        expect([400, 403], `${method} ${p}`).toContain(r.status);
      }
    }
    const mkcol = await fetch(`${davUrl()}/elsewhere`, { method: 'MKCOL', headers: auth });
    expect(mkcol.status).toBe(403);
    const other = await fetch(`${davUrl()}/.obsidian/app.json`, { method: 'PUT', headers: auth, body: '{}' });
    expect(other.status).toBe(403);
    const big = await fetch(`${davUrl()}/factual/big.md`, { method: 'PUT', headers: auth, body: 'x'.repeat(1024 * 1024 + 1) });
    expect(big.status).toBe(413);
    // A MOVE whose destination leaves the vault is refused too.
    const move = await fetch(`${davUrl()}/factual/coffee.md`, { method: 'MOVE', headers: { ...auth, destination: `${router.url}/api/v1/webdav/..%2f..%2fetc/x.md` } });
    expect(move.status).toBe(400);
    expect((await router.manage('GET', '/api/memory?q=espresso')).status).toBe(200);
  });

  it('a disabled vault answers 404; deleting the credentials closes it too', async () => {
    expect((await router.manage('POST', '/api/settings/obsidian/webdav', { username: USER, enabled: false })).json).toEqual({ username: USER, enabled: false, passwordSet: true });
    expect((await fetch(`${davUrl()}/`, { method: 'PROPFIND', headers: { depth: '1', authorization: basic(USER, PASS) } })).status).toBe(404);
    expect((await router.manage('POST', '/api/settings/obsidian/webdav', { username: USER, enabled: true })).status).toBe(200);
    expect((await fetch(`${davUrl()}/`, { method: 'PROPFIND', headers: { depth: '1', authorization: basic(USER, PASS) } })).status).toBe(207);
    expect((await router.manage('DELETE', '/api/settings/obsidian/webdav')).status).toBe(204);
    expect((await router.manage('GET', '/api/settings/obsidian/webdav')).json).toEqual({ username: null, enabled: false, passwordSet: false });
    expect((await fetch(`${davUrl()}/`, { method: 'PROPFIND', headers: { depth: '1', authorization: basic(USER, PASS) } })).status).toBe(404);
  });
});

/** A WebDAV request sent from another loopback address (its own throttle bucket). */
function fromAddress(localAddress: string, auth: string | null): Promise<{ status: number; retryAfter?: string }> {
  const url = new URL(`${davUrl()}/`);
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      { host: url.hostname, port: url.port, path: url.pathname, method: 'PROPFIND', localAddress, headers: { depth: '1', ...(auth ? { authorization: auth } : {}) } },
      (res) => {
        res.resume();
        res.on('end', () => resolve({ status: res.statusCode ?? 0, retryAfter: res.headers['retry-after'] as string | undefined }));
      },
    );
    req.on('error', reject);
    req.end();
  });
}

describe('note vault credential guessing', () => {
  it('is throttled per address: 10 wrong credentials a minute, then 429 even for the right ones; probes without credentials do not count', async () => {
    expect((await router.manage('POST', '/api/settings/obsidian/webdav', { username: USER, password: PASS, enabled: true })).status).toBe(200);
    const guesser = '127.0.0.2';
    for (let i = 0; i < 5; i++) expect((await fromAddress(guesser, null)).status).toBe(401);
    for (let i = 0; i < 10; i++) expect((await fromAddress(guesser, basic(USER, `guess-${i}`))).status, `guess ${i}`).toBe(401);
    const locked = await fromAddress(guesser, basic(USER, PASS));
    expect(locked.status).toBe(429);
    expect(Number(locked.retryAfter)).toBeGreaterThan(0);
    // Another address (the owner's client on 127.0.0.1) is not locked out.
    expect((await fromAddress('127.0.0.1', basic(USER, PASS))).status).toBe(207);
  });
});
