import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { clearSecretKeyCache, decryptSecret, encryptSecret, SecretError } from '../../src/daemon/store/secrets.js';

let dir: string;
let keyFile: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'router-secrets-'));
  keyFile = join(dir, 'secret.key');
  clearSecretKeyCache();
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe('secrets at rest', () => {
  it('creates a 32-byte key file with mode 0600 on first use and round-trips', () => {
    const enc = encryptSecret('whsec_abc', keyFile);
    expect(statSync(keyFile).mode & 0o777).toBe(0o600);
    expect(readFileSync(keyFile)).toHaveLength(32);
    expect(enc).toMatch(/^v1\.[\w-]+\.[\w-]+\.[\w-]+$/);
    expect(enc).not.toContain('whsec_abc');
    expect(decryptSecret(enc, keyFile)).toBe('whsec_abc');
  });

  it('uses a fresh nonce per encryption', () => {
    expect(encryptSecret('same', keyFile)).not.toBe(encryptSecret('same', keyFile));
  });

  it('keeps working across a restart (key read back from the file)', () => {
    const enc = encryptSecret('persist me', keyFile);
    clearSecretKeyCache();
    expect(decryptSecret(enc, keyFile)).toBe('persist me');
  });

  it('binds the context: a ciphertext moved to another row does not decrypt', () => {
    const enc = encryptSecret('s', keyFile, 'webhook:a');
    expect(decryptSecret(enc, keyFile, 'webhook:a')).toBe('s');
    expect(() => decryptSecret(enc, keyFile, 'webhook:b')).toThrow(SecretError);
  });

  it('rejects tampered values, foreign formats and another key', () => {
    const enc = encryptSecret('secret', keyFile);
    const parts = enc.split('.');
    parts[3] = Buffer.from('xxxxxx').toString('base64url');
    expect(() => decryptSecret(parts.join('.'), keyFile)).toThrow(SecretError);
    expect(() => decryptSecret('plain', keyFile)).toThrow(SecretError);
    const other = join(dir, 'other.key');
    expect(() => decryptSecret(enc, other)).toThrow(SecretError);
  });

  it('refuses (never replaces) a damaged key file', () => {
    writeFileSync(keyFile, Buffer.alloc(5));
    expect(() => encryptSecret('x', keyFile)).toThrow(/expected 32/);
    expect(readFileSync(keyFile)).toHaveLength(5);
  });
});
