/**
 * One reply contract from the route table (issue 28 item 4): every route declares its reply schema, the
 * typed client the CLI and the dashboard read (src/shared/api/) is what the table generates, and real
 * replies of a real daemon parse with their route's schema with nothing left over, so a schema cannot
 * drift from what the handler sends.
 */
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROUTES } from '../../src/daemon/routes.js';
import { REPO_ROOT } from '../support/cli.js';
import { checkReply, routeId as id } from '../support/reply-contract.js';
import { type RouterProcess, startRouter } from '../support/router-daemon.js';

describe('reply schemas', () => {
  it('every route declares its reply schema', () => {
    expect(ROUTES.filter((def) => !def.reply).map(id)).toEqual([]);
  });

  it('the typed client in src/shared/api is what the route table generates', async () => {
    const r = await execa(process.execPath, ['scripts/api-types.mjs', '--check'], { cwd: REPO_ROOT, reject: false });
    expect(r.stderr).toBe('');
    expect(r.exitCode).toBe(0);
  });
});

describe('real replies parse with their schema', () => {
  let router: RouterProcess;
  beforeAll(async () => {
    router = await startRouter();
  }, 30_000);
  afterAll(async () => {
    await router?.stop();
  });

  const checked = (method: string, path: string, body?: unknown) => checkReply(router, method, path, body);

  it('keys', async () => {
    const created = await checked('POST', '/api/keys', { name: 'contract', scopes: ['proxy'], tokenLimits: [{ scope: 'global', period: 'day', limit: 5 }] });
    await checked('GET', '/api/keys');
    await checked('GET', `/api/keys/${created.id}`);
    await checked('PATCH', `/api/keys/${created.id}`, { dailyRequestLimit: 10 });
    await checked('GET', `/api/quotas/${created.id}`);
    await checked('DELETE', `/api/keys/${created.id}`);
  });

  it('providers and accounts', async () => {
    await checked('GET', '/api/providers/catalog');
    const c = await checked('POST', '/api/providers', { provider: 'openai', name: 'contract', apiKey: 'sk-contract-0123456789abcdef' });
    await checked('GET', '/api/providers');
    await checked('GET', `/api/providers/${c.id}`);
    await checked('PUT', `/api/providers/${c.id}`, { priority: 2 });
    await checked('GET', '/api/accounts');
    await checked('DELETE', `/api/providers/${c.id}`);
  });

  it('resilience', async () => {
    await checked('GET', '/api/resilience');
    await checked('GET', '/api/resilience/model-cooldowns');
    await checked('DELETE', '/api/resilience/model-cooldowns');
    await checked('POST', '/api/resilience/reset', {});
  });
});
