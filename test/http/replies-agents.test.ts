/**
 * Real replies of the dashboard, MCP, A2A and agent routes parse with the reply schema their route declares
 * (test/support/reply-contract.ts).
 */
import { afterAll, beforeAll, describe, it } from 'vitest';
import { type CheckOptions, checkReply } from '../support/reply-contract.js';
import { type RouterProcess, startRouter } from '../support/router-daemon.js';

let router: RouterProcess;
beforeAll(async () => {
  router = await startRouter();
}, 60_000);
afterAll(async () => {
  await router?.stop();
});

const check = (method: string, path: string, body?: unknown, opts?: CheckOptions) => checkReply(router, method, path, body, opts);

describe('dashboard, MCP, A2A and agent replies parse with their route schema', () => {
  it('dashboard', async () => {
    await check('GET', '/', undefined, { anonymous: true });
    await check('GET', '/dashboard/usage', undefined, { anonymous: true });
  });
  it('mcp', async () => {
    await check('GET', '/api/mcp/status');
    await check('GET', '/api/mcp/tools');
    await check('GET', '/api/mcp/audit');
    await check('GET', '/api/mcp/audit/stats');
  });
  it('a2a and agents', async () => {
    await check('GET', '/.well-known/agent-card.json', undefined, { anonymous: true });
    await check('GET', '/.well-known/agent.json', undefined, { anonymous: true });
    await check('GET', '/api/tools/agent-bridge/state');
    await check('GET', '/api/settings/obsidian/webdav');
    await check('POST', '/api/settings/obsidian/webdav', { username: 'notes', password: 'a vault password' });
    await check('DELETE', '/api/settings/obsidian/webdav');
  });
});
