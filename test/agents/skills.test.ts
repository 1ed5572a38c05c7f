/**
 * The skills catalog end to end: import from a folder and from a zip, list/get/patch/delete, the
 * instructions injected into requests of the keys that enable a skill (and only those), served to MCP
 * clients as prompts and resources, and bad archives or SKILL.md files refused with 400.
 */
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { strToU8, zipSync } from 'fflate';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bootServices, buildApp, closeServices } from '../../src/daemon/boot.js';
import { startProxyEnv, type ProxyEnv } from '../support/proxy-env.js';

let env: ProxyEnv;
let dir: string;
let otherKey: string;
let keyId: string;

const SKILL_MD = (name: string, body: string) => `---\nname: ${name}\ndescription: Writes release notes in the house style.\n---\n\n${body}\n`;

beforeAll(async () => {
  env = await startProxyEnv([{ provider: 'openai', apiKey: 'sk-mock' }]);
  const keys = await env.router.manage('GET', '/api/keys');
  keyId = (keys.json.keys ?? keys.json).find((k: any) => k.scopes.includes('proxy')).id;
  otherKey = await env.router.createKey();
  dir = mkdtempSync(join(tmpdir(), 'router-skills-'));
});

afterAll(async () => {
  await env?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

async function upload(zip: Uint8Array, query = '') {
  const res = await fetch(`${env.router.url}/api/skills${query}`, {
    method: 'POST',
    headers: { 'content-type': 'application/zip', 'x-router-cli-token': env.router.cliToken },
    body: Buffer.from(zip),
  });
  return { status: res.status, json: (await res.json().catch(() => null)) as any };
}

async function chat(key: string) {
  env.mock.enqueue({ type: 'text', text: 'ok' });
  const res = await fetch(`${env.router.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
    body: JSON.stringify({ model: 'openai/gpt-4o', messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'hi' }] }),
  });
  expect(res.status).toBe(200);
  return env.mock.requests.at(-1)!.json as { messages: Array<{ role: string; content: string }> };
}

describe('skills catalog', () => {
  it('imports a folder, lists and shows it', async () => {
    const folder = join(dir, 'release-notes');
    mkdirSync(join(folder, 'templates'), { recursive: true });
    writeFileSync(join(folder, 'SKILL.md'), SKILL_MD('release-notes', 'Group changes under Added, Fixed, Removed.'));
    writeFileSync(join(folder, 'templates', 'notes.md'), '# Release {version}\n');
    const r = await env.router.manage('POST', '/api/skills', { path: folder, keys: [keyId] });
    expect(r.status, JSON.stringify(r.json)).toBe(201);
    expect(r.json).toMatchObject({ name: 'release-notes', files: ['SKILL.md', 'templates/notes.md'], keys: [keyId] });
    const list = await env.router.manage('GET', '/api/skills');
    expect(list.json.skills.map((s: any) => s.name)).toEqual(['release-notes']);
    const one = await env.router.manage('GET', '/api/skills/release-notes');
    expect(one.json.body).toBe('Group changes under Added, Fixed, Removed.');
    // The same name again is a conflict unless replacing.
    expect((await env.router.manage('POST', '/api/skills', { path: folder })).status).toBe(409);
  });

  it('injects the instructions into requests of the keys that enable the skill, and only those', async () => {
    const withSkill = await chat(env.key);
    expect(withSkill.messages[0]!.role).toBe('system');
    expect(JSON.stringify(withSkill.messages)).toContain('Group changes under Added, Fixed, Removed.');
    expect(JSON.stringify(withSkill.messages)).toContain('Be brief.');
    const without = await chat(otherKey);
    expect(JSON.stringify(without.messages)).not.toContain('Group changes');
    // Switched off for the key: no longer injected.
    expect((await env.router.manage('PATCH', '/api/skills/release-notes', { keys: [] })).status).toBe(200);
    expect(JSON.stringify((await chat(env.key)).messages)).not.toContain('Group changes');
    expect((await env.router.manage('PATCH', '/api/skills/release-notes', { keys: ['no-such-key'] })).status).toBe(400);
  });

  it('imports a zip (one top folder), enabled for a key by the query', async () => {
    const zip = zipSync({ 'commit-style/SKILL.md': strToU8(SKILL_MD('commit-style', 'Use the imperative mood.')), 'commit-style/examples.txt': strToU8('Add x\n') });
    const r = await upload(zip, `?keys=${keyId}`);
    expect(r.status, JSON.stringify(r.json)).toBe(201);
    expect(r.json).toMatchObject({ name: 'commit-style', files: ['SKILL.md', 'examples.txt'], keys: [keyId] });
    expect(JSON.stringify((await chat(env.key)).messages)).toContain('Use the imperative mood.');
  });

  it('serves skills to MCP clients as prompts and resources', async () => {
    const client = new Client({ name: 'skills-test', version: '1' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${env.router.url}/api/mcp/stream`), { requestInit: { headers: { 'x-router-cli-token': env.router.cliToken } } }));
    try {
      const prompts = await client.listPrompts();
      expect(prompts.prompts.map((p) => p.name)).toEqual(expect.arrayContaining(['skill-release-notes', 'skill-commit-style']));
      const p = await client.getPrompt({ name: 'skill-commit-style' });
      expect(JSON.stringify(p.messages)).toContain('Use the imperative mood.');
      const res = await client.readResource({ uri: 'skill://release-notes/SKILL.md' });
      expect((res.contents[0] as { text: string }).text).toContain('name: release-notes');
    } finally {
      await client.close();
    }
  });

  it('refuses bad skills and archives with 400 (zip-slip, no SKILL.md, bad name, too many files)', async () => {
    expect((await upload(zipSync({ '../evil/SKILL.md': strToU8(SKILL_MD('evil', 'x')) }))).status).toBe(400);
    expect((await upload(zipSync({ 'README.md': strToU8('no skill here') }))).status).toBe(400);
    const bad = await upload(zipSync({ 'SKILL.md': strToU8(SKILL_MD('Bad_Name', 'x')) }));
    expect(bad.status).toBe(400);
    expect(bad.json.error.message).toMatch(/lowercase letters/);
    expect((await upload(zipSync({ 'SKILL.md': strToU8('no front matter') }))).status).toBe(400);
    const many: Record<string, Uint8Array> = { 'SKILL.md': strToU8(SKILL_MD('many', 'x')) };
    for (let i = 0; i < 201; i++) many[`f${i}.txt`] = strToU8('x');
    expect((await upload(zipSync(many))).status).toBe(400);
    const linked = join(dir, 'linked');
    mkdirSync(linked);
    writeFileSync(join(linked, 'SKILL.md'), SKILL_MD('linked', 'x'));
    symlinkSync('/etc/passwd', join(linked, 'passwd'));
    expect((await env.router.manage('POST', '/api/skills', { path: linked })).status).toBe(400);
    expect((await env.router.manage('POST', '/api/skills', { path: 'relative/path' })).status).toBe(400);
    expect((await env.router.manage('GET', '/api/skills')).json.skills.map((s: any) => s.name)).toEqual(['commit-style', 'release-notes']);
  });

  it('refuses a zip holding one file twice with 400 (same path after normalizing, case, file and folder)', async () => {
    const archives: Array<Record<string, Uint8Array>> = [
      { 'SKILL.md': strToU8(SKILL_MD('dup', 'first')), './SKILL.md': strToU8(SKILL_MD('dup', 'second')) },
      { 'dup/SKILL.md': strToU8(SKILL_MD('dup', 'x')), 'dup/notes.md': strToU8('a'), 'dup/NOTES.md': strToU8('b') },
      { 'dup/SKILL.md': strToU8(SKILL_MD('dup', 'x')), 'dup/templates': strToU8('a file'), 'dup/templates/a.md': strToU8('b') },
    ];
    for (const files of archives) {
      const r = await upload(zipSync(files));
      expect(r.status, Object.keys(files).join(' ')).toBe(400);
      expect(r.json.error).toMatchObject({ code: 'invalid_archive', message: expect.stringMatching(/more than once|both a file and a folder/) });
    }
    expect((await env.router.manage('GET', '/api/skills')).json.skills.map((s: any) => s.name)).not.toContain('dup');
  });

  it('deletes a skill and its files', async () => {
    const del = await fetch(`${env.router.url}/api/skills/commit-style`, { method: 'DELETE', headers: { 'x-router-cli-token': env.router.cliToken } });
    expect(del.status).toBe(204);
    expect((await env.router.manage('GET', '/api/skills/commit-style')).status).toBe(404);
    expect((await env.router.manage('DELETE', '/api/skills/commit-style')).status).toBe(404);
  });
});

describe('folder import from another machine', () => {
  it('is refused (403): a remote caller uploads a zip instead', async () => {
    const h = mkdtempSync(join(tmpdir(), 'router-skills-remote-'));
    const services = await bootServices({ home: h, host: '127.0.0.1', port: 0 });
    try {
      const app = buildApp(services);
      const manageKey = (await services.keys.create('manage', ['manage'])).key;
      const res = await app.request(
        'http://router.test/api/skills',
        { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${manageKey}` }, body: JSON.stringify({ path: '/etc' }) },
        { remoteAddress: '203.0.113.7' },
      );
      expect(res.status).toBe(403);
    } finally {
      closeServices(services);
      rmSync(h, { recursive: true, force: true });
    }
  });
});
