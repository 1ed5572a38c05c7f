/**
 * Cluster mode's node identity and shared sealing key (CONTRACT "Wave three > Cluster mode"), on real daemon
 * processes: a node id generated once and kept, or given; a sealing key given by ROUTER_SECRET_KEY or
 * `--secret-key-file`, and a node holding another key refusing to start with one line that says so.
 * `GET /api/cluster` and `router status --json` show the mode and the node.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startMockUpstream, type MockUpstream } from '../mocks/upstream.js';
import { chatAs, startRouter } from '../support/router-daemon.js';
import { cleanupAll, describeResult, runRouter, tempHome } from '../support/cli.js';
import { bootServices, closeServices } from '../../src/daemon/boot.js';
import { Logger } from '../../src/daemon/logger.js';
import { clearSecretKeyCache } from '../../src/daemon/store/secrets.js';

let mock: MockUpstream;
const dirs: string[] = [];
const dir = (prefix: string) => {
  const d = mkdtempSync(join(tmpdir(), prefix));
  dirs.push(d);
  return d;
};

beforeAll(async () => {
  mock = await startMockUpstream();
});

afterAll(async () => {
  await mock?.close();
  await cleanupAll();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/**
 * Boots the daemon's services in this process (what the daemon does before it listens) and returns the
 * refusal message, or undefined when they started (and are closed again). Faster than a process per case;
 * the real daemon's refusal is shown once below.
 */
async function startRefusal(home: string, env: Record<string, string>): Promise<string | undefined> {
  clearSecretKeyCache();
  try {
    const services = await bootServices({ home, host: '127.0.0.1', port: 0, env, log: new Logger({ file: join(home, 'test.log') }) });
    await closeServices(services);
    return undefined;
  } catch (err) {
    return (err as Error).message;
  } finally {
    clearSecretKeyCache();
  }
}

describe('node identity', () => {
  it('a fresh state folder gets a node id once; it is kept across restarts; GET /api/cluster shows one node on SQLite', async () => {
    const home = dir('router-node-');
    const a = await startRouter({ home });
    const cluster = (await a.manage('GET', '/api/cluster')).json;
    await a.stop();
    expect(cluster).toMatchObject({
      mode: 'single',
      nodeId: expect.stringMatching(/^node-[0-9a-f]{8}$/),
      database: { kind: 'sqlite', healthy: true, latencyMs: expect.any(Number) },
      redis: { configured: false, healthy: false, latencyMs: null },
    });
    expect(cluster.nodes).toEqual([{ nodeId: cluster.nodeId, url: a.url, version: expect.any(String), lastSeenAt: expect.any(String), healthy: true }]);
    expect(readFileSync(join(home, 'node-id'), 'utf8').trim()).toBe(cluster.nodeId);
    const b = await bootServices({ home, host: '127.0.0.1', port: 0, env: {}, log: new Logger({ file: join(home, 'test.log') }) });
    expect(b.nodeId).toBe(cluster.nodeId);
    await closeServices(b);
  }, 60_000);

  it('an invalid ROUTER_NODE_ID refuses to start', async () => {
    expect(await startRefusal(dir('router-node-'), { ROUTER_NODE_ID: 'bad id!' })).toContain("the node id 'bad id!' is not valid");
  }, 60_000);

  it('router start --node-id reaches the daemon; router status shows the node and the mode', async () => {
    const home = tempHome();
    const started = await runRouter(['start', '--home', home, '--port', '0', '--node-id', 'edge-7']);
    expect(started.exitCode, describeResult(started)).toBe(0);
    const status = await runRouter(['status', '--home', home, '--json']);
    expect(JSON.parse(status.stdout)).toMatchObject({ running: true, mode: 'single', nodeId: 'edge-7' });
    const human = await runRouter(['status', '--home', home]);
    expect(human.stdout).toContain('node     edge-7 (single machine)');
    expect((await runRouter(['stop', '--home', home])).exitCode).toBe(0);
  }, 60_000);
});

describe('a given sealing key', () => {
  it('seals with ROUTER_SECRET_KEY; the same key starts again and opens the credentials; another key refuses to start', async () => {
    const home = dir('router-key-');
    const keyA = randomBytes(32).toString('hex');
    const a = await startRouter({ home, env: { ROUTER_SECRET_KEY: keyA } });
    await a.addConnection({ provider: 'openai', apiKey: 'sk-sealed-0123456789', providerSpecificData: { baseUrl: mock.openaiBase } });
    await a.stop();
    // The real daemon refuses with one line (the CLI prints it as `could not start: ...`).
    const refused = await startRouter({ home, env: { ROUTER_SECRET_KEY: randomBytes(32).toString('hex') } }).then(
      async (r) => {
        await r.stop();
        return 'started';
      },
      (err: Error) => err.message,
    );
    expect(refused).toContain('does not open the secrets of its database');
    expect(refused).not.toContain(keyA);
    const again = await startRouter({ home, env: { ROUTER_SECRET_KEY: keyA } });
    const key = await again.createKey();
    const chat = await chatAs(again.url, key, 'openai/gpt-4o-mini');
    expect(chat.status).toBe(200);
    expect(mock.requests.at(-1)?.headers.authorization).toBe('Bearer sk-sealed-0123456789');
    await again.stop();
  }, 90_000);

  it('--secret-key-file (raw 32 bytes or 64 hex) is the same key; a bad file or a bad ROUTER_SECRET_KEY refuses with one line', async () => {
    const home = dir('router-keyfile-');
    const key = randomBytes(32);
    const raw = join(dir('router-k-'), 'raw.key');
    const hex = join(dir('router-k-'), 'hex.key');
    writeFileSync(raw, key);
    writeFileSync(hex, `${key.toString('hex')}\n`);
    const a = await startRouter({ home, env: { ROUTER_SECRET_KEY_FILE: raw } });
    await a.addConnection({ provider: 'openai', apiKey: 'sk-file-0123456789', providerSpecificData: { baseUrl: mock.openaiBase } });
    await a.stop();
    expect(await startRefusal(home, { ROUTER_SECRET_KEY_FILE: hex })).toBeUndefined();
    expect(await startRefusal(home, { ROUTER_SECRET_KEY: key.toString('hex') })).toBeUndefined();
    const short = join(dir('router-k-'), 'short.key');
    writeFileSync(short, 'abc');
    expect(await startRefusal(home, { ROUTER_SECRET_KEY_FILE: short })).toContain('must hold 32 bytes, or 64 hexadecimal characters');
    expect(await startRefusal(home, { ROUTER_SECRET_KEY_FILE: join(home, 'missing.key') })).toContain('cannot read the secret key file (ENOENT)');
    expect(await startRefusal(home, { ROUTER_SECRET_KEY: 'zz' })).toContain('ROUTER_SECRET_KEY must be 64 hexadecimal characters');
  }, 90_000);

  it("a state folder whose secrets are sealed with its own secret.key refuses a different given key instead of losing them", async () => {
    const home = dir('router-own-');
    clearSecretKeyCache();
    const services = await bootServices({ home, host: '127.0.0.1', port: 0, env: {}, log: new Logger({ file: join(home, 'test.log') }) });
    await services.connections.create({ provider: 'openai', name: 'own', authKind: 'api-key', credential: { apiKey: 'sk-own-0123456789' } });
    await closeServices(services);
    expect(await startRefusal(home, { ROUTER_SECRET_KEY: randomBytes(32).toString('hex') })).toContain("sealed with the state folder's secret.key");
    // Its own key, given explicitly, is accepted (the way into a cluster: give every node this key).
    expect(await startRefusal(home, { ROUTER_SECRET_KEY: readFileSync(join(home, 'secret.key')).toString('hex') })).toBeUndefined();
  }, 90_000);
});
