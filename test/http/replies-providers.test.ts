/**
 * Real replies of the provider, provider node, model, import, combo and fallback-chain routes parse with
 * the reply schema their route declares (test/support/reply-contract.ts). The daemon runs with a fake HOME
 * holding an Antigravity login file and no keychain, and one connection on the mock upstream.
 */
import { join } from 'node:path';
import { strToU8, zipSync } from 'fflate';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deriveCliToken } from '../../src/shared/cli-token.js';
import { type FakeMachine, fakeMachine } from '../imports/fixtures.js';
import { type MockUpstream, startMockUpstream } from '../mocks/upstream.js';
import { type CheckOptions, checkReply } from '../support/reply-contract.js';
import { type RouterProcess, startRouter } from '../support/router-daemon.js';

let router: RouterProcess;
let mock: MockUpstream;
let machine: FakeMachine;
let connectionId: string;

const agyFile = (access: string) => ({
  token: { access_token: access, token_type: 'Bearer', refresh_token: `1//${access}`, expiry: new Date(Date.now() + 3_600_000).toISOString() },
  auth_method: 'consumer',
});

beforeAll(async () => {
  mock = await startMockUpstream();
  machine = fakeMachine();
  machine.writeFile('.gemini/antigravity-cli/antigravity-oauth-token', agyFile('ya29.agy-local'));
  const started = await startRouter({ env: machine.env({ ROUTER_KEYCHAIN_BACKEND: 'none' }) });
  // The CLI token is derived for the daemon's user and HOME (the fake one here).
  const prev = process.env.HOME;
  process.env.HOME = machine.home;
  try {
    router = { ...started, cliToken: deriveCliToken(join(started.home, 'cli-token.salt'))! };
  } finally {
    process.env.HOME = prev;
  }
  connectionId = (await checkReply(router, 'POST', '/api/providers', { provider: 'openai', name: 'mock', apiKey: 'sk-up-0123456789', providerSpecificData: { baseUrl: mock.openaiBase } }, { status: 201 })).id;
}, 60_000);
afterAll(async () => {
  await router?.stop();
  await mock?.close();
});

const check = (method: string, path: string, body?: unknown, opts?: CheckOptions) => checkReply(router, method, path, body, opts);

describe('provider replies parse with their route schema', () => {
  it('connections, their models and tests', async () => {
    const test = await check('POST', `/api/providers/${connectionId}/test`);
    expect(test.ok).toBe(true);
    await check('GET', `/api/providers/${connectionId}/models`);
    const synced = await check('POST', `/api/providers/${connectionId}/sync-models`);
    expect(synced.count).toBeGreaterThan(0);
    const all = await check('POST', '/api/providers/test-all', {});
    expect(all.results.length).toBeGreaterThan(0);
    await check('GET', '/api/models');
    await check('GET', '/api/models?all=true');
    const ok = await check('POST', '/api/models/test', { model: 'openai/gpt-4o-mini' });
    expect(ok.ok).toBe(true);
    mock.handle(() => ({ type: 'status', status: 400, message: 'model not served here' }));
    const failed = await check('POST', '/api/models/test', { model: 'openai/gpt-4o-mini' });
    mock.reset();
    expect(failed.ok).toBe(false);
  });

  it('provider nodes', async () => {
    const node = await check('POST', '/api/provider-nodes', { name: 'GPU box', prefix: 'gpu', type: 'openai-compatible', baseUrl: mock.openaiBase, rerankFormat: 'tei' });
    await check('GET', '/api/provider-nodes');
    await check('GET', `/api/provider-nodes/${node.id}`);
    await check('PUT', `/api/provider-nodes/${node.id}`, { customHeaders: { 'x-team': 'a' }, tokenLimitField: 'max_tokens' });
    await check('DELETE', `/api/provider-nodes/${node.id}`);
  });

  it('imports', async () => {
    const env = await check('POST', '/api/providers/env/import', { credentials: [{ variable: 'OPENAI_API_KEY', provider: 'openai', apiKey: 'sk-env-0123456789' }], dryRun: true });
    expect(env.results.length).toBe(1);
    const found = await check('POST', '/api/providers/keychain/discover');
    const agy = found.accounts.find((a: { provider: string }) => a.provider === 'antigravity');
    expect(agy).toBeDefined();
    await check('POST', '/api/providers/keychain/import', { confirmedAccounts: [{ service: agy.service, account: agy.account, fingerprint: agy.fingerprint }] });
    await check('POST', '/api/providers/agy-auth/import', agyFile('ya29.agy-single'));
    await check('POST', '/api/providers/agy-auth/import-bulk', { files: [agyFile('ya29.agy-bulk-1'), agyFile('ya29.agy-bulk-2')] });
    const archive = zipSync({ 'a/agy.json': strToU8(JSON.stringify(agyFile('ya29.agy-zip'))), 'readme.txt': strToU8('not a token') });
    const zipped = await check('POST', '/api/providers/agy-auth/zip-extract', undefined, { raw: archive, headers: { 'content-type': 'application/zip' } });
    expect(zipped.ignored).toEqual(['readme.txt']);
    await check('POST', '/api/providers/agy-auth/apply-local');
  });
});

describe('combo replies parse with their route schema', () => {
  it('combos', async () => {
    const combo = await check('POST', '/api/combos', { name: 'contract', strategy: 'weighted', models: [{ model: 'openai/gpt-4o-mini', weight: 2 }, 'openai/gpt-4o'], hedgeAfterMs: 500, midStreamRecovery: 'continue' });
    await check('GET', '/api/combos');
    await check('GET', `/api/combos/${combo.id}`);
    await check('PUT', `/api/combos/${combo.id}`, { name: 'contract', models: ['openai/gpt-4o-mini'], affinity: 'session', contextFit: true });
    await check('DELETE', `/api/combos/${combo.id}`);
  });

  it('fallback chains', async () => {
    const chain = await check('POST', '/api/fallback-chains', { name: 'chain', models: ['openai/gpt-4o-mini', 'openai/gpt-4o'] });
    await check('GET', '/api/fallback-chains');
    await check('GET', `/api/fallback-chains/${chain.id}`);
    await check('PUT', `/api/fallback-chains/${chain.id}`, { name: 'chain', models: ['openai/gpt-4o'] });
    await check('DELETE', `/api/fallback-chains/${chain.id}`);
  });
});
