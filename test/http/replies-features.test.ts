/**
 * Real replies of the feature routes (memory, playground, response and reasoning cache, guardrails,
 * backups, request hooks, skills) parse with the reply schema their route declares
 * (test/support/reply-contract.ts), on a real daemon with one connection on the mock upstream.
 */
import { strToU8, zipSync } from 'fflate';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type MockUpstream, startMockUpstream } from '../mocks/upstream.js';
import { type CheckOptions, checkReply } from '../support/reply-contract.js';
import { type RouterProcess, startRouter } from '../support/router-daemon.js';

let router: RouterProcess;
let mock: MockUpstream;
let keyId: string;
let key: string;

beforeAll(async () => {
  mock = await startMockUpstream();
  router = await startRouter();
  await router.addConnection({ provider: 'openai', apiKey: 'sk-up-0123456789', providerSpecificData: { baseUrl: mock.openaiBase } });
  const created = await checkReply(router, 'POST', '/api/keys', { name: 'features', scopes: ['proxy'] }, { status: 201 });
  keyId = created.id;
  key = created.key;
}, 60_000);
afterAll(async () => {
  await router?.stop();
  await mock?.close();
});

const check = (method: string, path: string, body?: unknown, opts?: CheckOptions) => checkReply(router, method, path, body, opts);

describe('feature replies parse with their route schema', () => {
  it('memory', async () => {
    const m = await check('POST', '/api/memory', { type: 'factual', key: 'editor', content: 'The user edits with vim.', apiKeyId: keyId, metadata: { source: 'test' } });
    await check('GET', '/api/memory');
    await check('GET', `/api/memory/${m.id}`);
    await check('PUT', `/api/memory/${m.id}`, { content: 'The user edits with helix.' });
    await check('GET', '/api/memory/health');
    await check('GET', '/api/memory/engine-status');
    await check('GET', '/api/memory/embedding-providers');
    const found = await check('POST', '/api/memory/retrieve-preview', { query: 'editor', apiKeyId: keyId, strategy: 'exact' });
    expect(found.memories.length).toBeGreaterThan(0);
    await check('GET', '/api/memory/settings');
    await check('PUT', '/api/memory/settings', { qdrantApiKey: 'qdrant-secret-key', summarizationModel: 'openai/gpt-4o-mini' });
    await check('GET', `/api/memory/keys/${keyId}/settings`);
    await check('PUT', `/api/memory/keys/${keyId}/settings`, { inject: true });
    await check('POST', '/api/memory/reindex', { wait: true });
    await check('POST', '/api/memory/reindex', { wait: false }, { status: 202 });
    await check('POST', '/api/memory/summarize', { olderThanDays: 0 });
    await check('DELETE', `/api/memory/${m.id}`);
  });

  it('playground', async () => {
    // Client tier: the key's own presets.
    const asKey = { anonymous: true, headers: { authorization: `Bearer ${key}` } };
    const p = await check('POST', '/api/playground/presets', { name: 'p', model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }], parameters: { temperature: 0.2, stop: ['x'] } }, { ...asKey, status: 201 });
    await check('GET', '/api/playground/presets', undefined, asKey);
    await check('GET', `/api/playground/presets/${p.id}`, undefined, asKey);
    await check('PUT', `/api/playground/presets/${p.id}`, { name: 'p2', model: 'openai/gpt-4o' }, asKey);
    await check('DELETE', `/api/playground/presets/${p.id}`, undefined, asKey);
    mock.enqueue({ type: 'text', text: '{"improvedSystem": "Be brief.", "improvedPrompt": "Say hi."}' });
    await check('POST', '/api/playground/improve-prompt', { model: 'openai/gpt-4o-mini', prompt: 'hi' }, asKey);
  });

  it('response and reasoning cache', async () => {
    await check('GET', '/api/cache');
    await check('PATCH', '/api/cache', { enabled: true, ttlSeconds: 60 });
    await check('DELETE', '/api/cache');
    await check('GET', `/api/cache/keys/${keyId}`);
    await check('PUT', `/api/cache/keys/${keyId}`, { mode: 'always' });
    await check('GET', '/api/cache/reasoning');
    await check('GET', '/api/cache/reasoning?full=1');
    await check('DELETE', '/api/cache/reasoning');
  });

  it('guardrails', async () => {
    await check('GET', '/api/guardrails');
    await check('PUT', '/api/guardrails', { pii: { mode: 'redact' }, blockedTerms: { mode: 'block', terms: ['forbidden'] } });
    await check('PATCH', '/api/guardrails', { secrets: { mode: 'log' } });
    await check('PUT', `/api/guardrails/keys/${keyId}`, { pii: { mode: 'off' } });
    await check('GET', `/api/guardrails/keys/${keyId}`);
    await check('GET', '/api/guardrails');
    const t = await check('POST', '/api/guardrails/test', { text: 'mail me at a@example.com, forbidden' });
    expect(t.findings.length).toBeGreaterThan(0);
    await check('DELETE', `/api/guardrails/keys/${keyId}`);
  });

  it('backups', async () => {
    const b = await check('POST', '/api/db-backups');
    await check('GET', '/api/db-backups');
    await check('GET', '/api/db-backups/export');
    await check('POST', '/api/db-backups/export', { passphrase: 'a long export passphrase' });
    await check('DELETE', `/api/db-backups/${b.id}`);
  });

  it('request hooks', async () => {
    const h = await check('POST', '/api/middleware/hooks', { name: 'team', match: { model: 'openai/*' }, actions: [{ type: 'set_header', name: 'X-Team', value: 'a' }] });
    await check('GET', '/api/middleware/hooks');
    await check('GET', `/api/middleware/hooks/${h.id}`);
    await check('PUT', `/api/middleware/hooks/${h.id}`, { name: 'team', actions: [{ type: 'tag', tag: 'team' }] });
    await check('PATCH', `/api/middleware/hooks/${h.id}`, { enabled: false });
    await check('DELETE', `/api/middleware/hooks/${h.id}`);
  });

  it('skills', async () => {
    const md = '---\nname: commit-style\ndescription: Writes commit messages.\n---\n\nUse the imperative mood.\n';
    const zip = zipSync({ 'commit-style/SKILL.md': strToU8(md), 'commit-style/examples.txt': strToU8('Add x\n') });
    await check('POST', `/api/skills?keys=${keyId}`, undefined, { raw: zip, headers: { 'content-type': 'application/zip' } });
    await check('GET', '/api/skills');
    await check('GET', '/api/skills/commit-style');
    await check('PATCH', '/api/skills/commit-style', { keys: [] });
    await check('DELETE', '/api/skills/commit-style');
  });
});
