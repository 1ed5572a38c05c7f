/**
 * Issue 15 item 6: `router models` shows what works. A fresh daemon lists nothing it cannot call; a
 * connection makes its provider's models appear; local servers are probed (their own model list when they
 * answer, nothing when they do not); a node's models appear once `providers test` found them; `--all` is
 * the whole catalog with the reason a model is unavailable. Real daemon, mock upstreams.
 */
import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startMockUpstream, type MockUpstream } from '../mocks/upstream.js';
import { freePort } from '../support/cli.js';
import { startRouter, type RouterProcess } from '../support/router-daemon.js';
import { isolateCliConfig, json, run, show } from './helpers.js';

let router: RouterProcess;
let mock: MockUpstream;
let configDir: string;

beforeAll(async () => {
  configDir = isolateCliConfig();
  [router, mock] = await Promise.all([startRouter(), startMockUpstream()]);
}, 60_000);

afterAll(async () => {
  await Promise.all([router?.stop(), mock?.close()]);
  rmSync(configDir, { recursive: true, force: true });
});

const R = (...args: string[]) => run([...args, '--home', router.home]);
async function ok(...args: string[]) {
  const r = await R(...args);
  expect(r.exitCode, show(r)).toBe(0);
  return r;
}
type Row = { id: string; provider: string; source: string; available: boolean; availability: string };
const models = async (...args: string[]) => json<Row[]>(await ok('models', '--json', ...args));

describe('router models shows what works', () => {
  it('a fresh daemon lists only what it can call; --all lists the catalog with the reason', async () => {
    const usable = await models();
    expect(usable.every((m) => m.available)).toBe(true);
    // nothing of a provider without a connection; local models only from a server that answered
    expect(usable.filter((m) => !['combo', 'local'].includes(m.availability))).toEqual([]);
    expect(usable.some((m) => m.provider === 'openai')).toBe(false);
    const all = await models('--all');
    expect(all).toContainEqual(expect.objectContaining({ id: 'openai/gpt-4.1', available: false, availability: 'no connection' }));
    const human = await ok('models', '--all', '--provider', 'openai');
    expect(human.stdout).toMatch(/^MODEL\s+PROVIDER\s+CONTEXT\s+SOURCE\s+AVAILABLE\n/);
    expect(human.stdout).toMatch(/\nopenai\/gpt-4\.1\s+openai\s+[\d,]+\s+static\s+no \(no connection\)\n/);
  });

  it('a connection makes its models appear', async () => {
    await ok('providers', 'add', 'openai', '--api-key', 'sk-models-0123456789', '--base-url', mock.openaiBase);
    const usable = await models('--provider', 'openai');
    expect(usable.length).toBeGreaterThan(0);
    expect(usable.every((m) => m.availability === 'connected')).toBe(true);
  });

  it('local servers are probed: the models a reachable one has, marked local; an unreachable one is hidden', async () => {
    const local = json(await ok('providers', 'add', 'lmstudio', '--base-url', mock.openaiBase, '--json'));
    const found = await models('--provider', 'lmstudio');
    expect(found.map((m) => [m.id, m.source, m.availability])).toEqual([
      ['lmstudio/gpt-4o-mini', 'local', 'local'],
      ['lmstudio/gpt-4.1', 'local', 'local'],
      ['lmstudio/text-embedding-3-small', 'local', 'local'],
    ]);
    await ok('providers', 'rm', local.id);
    await ok('providers', 'add', 'lmstudio', '--base-url', `http://127.0.0.1:${await freePort()}/v1`);
    const t0 = Date.now();
    expect(await models('--provider', 'lmstudio')).toEqual([]);
    expect(Date.now() - t0).toBeLessThan(3_000);
    const all = await models('--all', '--provider', 'lmstudio');
    expect(all.length).toBeGreaterThan(0);
    expect(all.every((m) => m.availability === 'unreachable' && !m.available)).toBe(true);
  });

  it("a node's models are listed once providers test found them", async () => {
    await ok('providers', 'nodes', 'add', '--name', 'gpu', '--prefix', 'gpu', '--type', 'openai-compatible', '--base-url', mock.openaiBase);
    const conn = json(await ok('providers', 'add', 'gpu', '--api-key', 'sk-gpu-0123456789', '--json'));
    expect((await models()).filter((m) => m.id.startsWith('gpu/'))).toEqual([]);
    expect((await ok('providers', 'test', conn.id)).stdout).toMatch(/with 3 models/);
    expect((await models()).filter((m) => m.id.startsWith('gpu/')).map((m) => m.id).sort()).toEqual(['gpu/gpt-4.1', 'gpu/gpt-4o-mini', 'gpu/text-embedding-3-small']);
  });
});
