/** The CLIs' credential file formats, read into connection fields. */
import { describe, expect, it } from 'vitest';
import {
  parseAntigravity,
  parseClaudeCode,
  parseCodex,
  parseGeminiCli,
  parseGithubCopilot,
  parseQwenCode,
  toExpiry,
} from '../../src/daemon/imports/formats.js';
import { parseSecretToolOutput } from '../../src/daemon/imports/keychain.js';
import { claudeFile, codexFile, jwt } from './fixtures.js';

describe('credential file formats', () => {
  it('Claude Code .credentials.json', () => {
    const [a] = parseClaudeCode(claudeFile('sk-ant-oat01-x'));
    expect(a).toMatchObject({ provider: 'claude-code', label: 'claude-max', accessToken: 'sk-ant-oat01-x', refreshToken: 'sk-ant-ort01-file' });
    expect(a!.providerSpecificData).toEqual({ subscriptionType: 'max', scopes: ['user:inference'] });
    expect(Date.parse(a!.expiresAt!)).toBeGreaterThan(Date.now());
    expect(() => parseClaudeCode({ other: 1 })).toThrow(/claudeAiOauth/);
  });

  it('Codex auth.json: email and account id from the id token, expiry from the access token', () => {
    const exp = Math.floor(Date.now() / 1000) + 600;
    const doc = codexFile(jwt({ exp }));
    const [a] = parseCodex(doc);
    expect(a).toMatchObject({ provider: 'codex', label: 'dev@example.com', refreshToken: 'rt-codex-file' });
    expect(a!.providerSpecificData).toEqual({ accountId: 'acct-123', email: 'dev@example.com', planType: 'pro' });
    expect(a!.expiresAt).toBe(new Date(exp * 1000).toISOString());
  });

  it('Gemini CLI oauth_creds.json and its keychain item', () => {
    const file = parseGeminiCli({ access_token: 'ya29.a', refresh_token: '1//r', expiry_date: 1_900_000_000_000, id_token: jwt({ email: 'g@example.com' }) });
    expect(file[0]).toMatchObject({ provider: 'gemini-cli', label: 'g@example.com', accessToken: 'ya29.a', refreshToken: '1//r', expiresAt: new Date(1_900_000_000_000).toISOString() });
    const item = parseGeminiCli({ serverName: 'main-account', token: { accessToken: 'ya29.k', refreshToken: '1//k', expiresAt: 1_900_000_000_000, tokenType: 'Bearer' } });
    expect(item[0]).toMatchObject({ accessToken: 'ya29.k', refreshToken: '1//k' });
  });

  it('Qwen Code oauth_creds.json', () => {
    const [a] = parseQwenCode({ access_token: 'q-at', refresh_token: 'q-rt', token_type: 'Bearer', resource_url: 'portal.qwen.ai', expiry_date: 1_900_000_000_000 });
    expect(a).toMatchObject({ provider: 'qwen-code', label: 'portal.qwen.ai', providerSpecificData: { resourceUrl: 'portal.qwen.ai' } });
  });

  it('GitHub Copilot apps.json / hosts.json: one account per entry with a token', () => {
    const accounts = parseGithubCopilot({
      'github.com:Iv1.b507a08c87ecfe98': { user: 'octo', oauth_token: 'ghu_a', githubAppId: 'Iv1.b507a08c87ecfe98' },
      'ghe.example.com': { user: 'cat', oauth_token: 'gho_b' },
      broken: { user: 'x' },
    });
    expect(accounts.map((a) => [a.label, a.accessToken])).toEqual([['octo@github.com', 'ghu_a'], ['cat@ghe.example.com', 'gho_b']]);
    expect(() => parseGithubCopilot({})).toThrow(/oauth_token/);
  });

  it('Antigravity token files: the CLI nested form and the flat exported form', () => {
    const nested = parseAntigravity({ token: { access_token: 'ya29.n', refresh_token: '1//n', expiry: '2026-07-06T10:09:19.638+09:00' }, auth_method: 'consumer' });
    expect(nested[0]).toMatchObject({ provider: 'antigravity', label: 'default', expiresAt: '2026-07-06T01:09:19.638Z', providerSpecificData: { authMethod: 'consumer' } });
    const flat = parseAntigravity({ type: 'antigravity', access_token: 'ya29.f', refresh_token: '1//f', expires_in: 3599, timestamp: 1_800_000_000_000, email: 'a@example.com', project_id: 'p-1' });
    expect(flat[0]).toMatchObject({ label: 'a@example.com', expiresAt: new Date(1_800_000_000_000 + 3_599_000).toISOString(), providerSpecificData: { email: 'a@example.com', projectId: 'p-1' } });
    expect(() => parseAntigravity([1])).toThrow(/JSON object/);
  });

  it('expiry values: epoch seconds, milliseconds, numeric strings and dates; junk is no expiry', () => {
    expect(toExpiry(1_800_000_000)).toBe(new Date(1_800_000_000_000).toISOString());
    expect(toExpiry(1_800_000_000_000)).toBe(new Date(1_800_000_000_000).toISOString());
    expect(toExpiry('1800000000')).toBe(new Date(1_800_000_000_000).toISOString());
    expect(toExpiry('soon')).toBeUndefined();
    expect(toExpiry(-1)).toBeUndefined();
  });

  it('secret-tool search output: one record per item', () => {
    const text = '[/org/freedesktop/secrets/collection/login/1]\nlabel = a\nsecret = {"x": "a = b"}\nattribute.account = me\n[/org/freedesktop/secrets/collection/login/2]\nsecret = s2\n';
    expect(parseSecretToolOutput(text)).toEqual([{ label: 'a', secret: '{"x": "a = b"}', 'attribute.account': 'me' }, { secret: 's2' }]);
  });
});
