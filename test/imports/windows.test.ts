/**
 * The Windows Credential Manager reader, with a fake `powershell.exe` on PATH that prints what the real
 * script prints (one JSON line per credential: target, user and blob in base64). keytar writes UTF-8
 * blobs, keyring-rs UTF-16LE ones; both read.
 */
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readKeychain } from '../../src/daemon/imports/keychain.js';
import { claudeFile, codexFile } from './fixtures.js';

let dir: string;
const savedPath = process.env.PATH;

const b64 = (s: string, enc: BufferEncoding = 'utf8') => Buffer.from(s, enc).toString('base64');

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'router-win-'));
  const lines = [
    { target: b64('Claude Code-credentials/alice'), user: b64('alice'), blob: b64(JSON.stringify(claudeFile('sk-ant-oat01-win'))) },
    { target: b64('cli|0123456789abcdef.Codex Auth'), user: b64('cli|0123456789abcdef'), blob: b64(JSON.stringify(codexFile('codex-win')), 'utf16le') },
    { target: b64('git:https://github.com'), user: b64('octo'), blob: b64('ghp_not_ours') },
  ].map((l) => JSON.stringify(l));
  writeFileSync(join(dir, 'lines'), `${lines.join('\r\n')}\r\n`);
  writeFileSync(join(dir, 'args'), '');
  writeFileSync(join(dir, 'powershell.exe'), `#!/bin/sh\nprintf '%s\\n' "$@" > "${join(dir, 'args')}"\ncat "${join(dir, 'lines')}"\n`);
  chmodSync(join(dir, 'powershell.exe'), 0o755);
  process.env.PATH = `${dir}:${savedPath}`;
});

afterAll(() => {
  process.env.PATH = savedPath;
  rmSync(dir, { recursive: true, force: true });
});

describe('Windows Credential Manager', () => {
  it('reads the CLIs’ generic credentials (UTF-8 and UTF-16LE blobs) and ignores others', async () => {
    const found = await readKeychain('windows');
    expect(found.map((s) => [s.service, s.account, s.parsed.provider, s.parsed.accessToken])).toEqual([
      ['Claude Code-credentials', 'alice', 'claude-code', 'sk-ant-oat01-win'],
      ['Codex Auth', 'cli|0123456789abcdef', 'codex', 'codex-win'],
    ]);
    const { readFileSync } = await import('node:fs');
    const args = readFileSync(join(dir, 'args'), 'utf8');
    expect(args.split('\n').slice(0, 3)).toEqual(['-NoProfile', '-NonInteractive', '-Command']);
    expect(args).toContain("[RouterCredList]::Print('*Claude Code-credentials*')");
  });

  it('a missing tool finds nothing instead of failing', async () => {
    process.env.PATH = '/nonexistent';
    try {
      expect(await readKeychain('windows')).toEqual([]);
      expect(await readKeychain('macos')).toEqual([]);
      expect(await readKeychain('secret-service')).toEqual([]);
    } finally {
      process.env.PATH = `${dir}:${savedPath}`;
    }
  });
});
