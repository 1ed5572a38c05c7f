/**
 * Cluster mode's shared database (issue 29 item 2, CONTRACT "Wave three > Cluster mode"): daemons started
 * with ROUTER_DATABASE_URL keep the records of the modules on the storage seam in one real PostgreSQL 15
 * (migrated once), check the cluster's sealing key there, show mode, masked URL and the shared/local module
 * lists in GET /api/cluster and never print the password. Refusals: wrong key, unreachable database, TLS
 * required by the URL but not offered by the server, a URL that is not postgres://.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bootServices, closeServices } from '../../src/daemon/boot.js';
import { Logger } from '../../src/daemon/logger.js';
import { clearSecretKeyCache } from '../../src/daemon/store/secrets.js';
import { SHARED_MODULES, LOCAL_MODULES } from '../../src/daemon/cluster/shared-modules.js';
import { clusterUnavailable, startCluster, type ClusterUnderTest } from '../support/cluster.js';
import { describeResult, freePort, runRouter } from '../support/cli.js';
import { startRouter } from '../support/router-daemon.js';

const missing = clusterUnavailable();
const PASSWORD = 's3cret-pw';
const dirs: string[] = [];
const dir = () => {
  const d = mkdtempSync(join(tmpdir(), 'router-db-'));
  dirs.push(d);
  return d;
};

/** Boots the services in this process with a database URL; the refusal message, or undefined when it started. */
async function startRefusal(databaseUrl: string, env: Record<string, string>): Promise<string | undefined> {
  clearSecretKeyCache();
  const home = dir();
  try {
    const services = await bootServices({ home, host: '127.0.0.1', port: 0, env, databaseUrl, log: new Logger({ file: join(home, 'test.log') }) });
    closeServices(services);
    return undefined;
  } catch (err) {
    return (err as Error).message;
  } finally {
    clearSecretKeyCache();
  }
}

describe.skipIf(missing)(`shared database${missing ? ` (skipped: ${missing})` : ''}`, () => {
  let cluster: ClusterUnderTest;

  beforeAll(async () => {
    cluster = await startCluster({ nodes: 2, userInfo: `postgres:${PASSWORD}` });
  }, 120_000);

  afterAll(async () => {
    await cluster?.stop();
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  }, 60_000);

  it('GET /api/cluster: mode cluster, PostgreSQL healthy, URL masked, the shared and node-local module lists', async () => {
    const [a] = cluster.nodes;
    const view = (await a!.manage('GET', '/api/cluster')).json;
    expect(view.mode).toBe('cluster');
    expect(view.nodeId).toBe('node-1');
    expect(view.database).toMatchObject({ kind: 'postgres', healthy: true });
    expect(view.database.latencyMs).toBeGreaterThanOrEqual(0);
    expect(view.database.url).toContain('postgres:****@127.0.0.1');
    expect(JSON.stringify(view)).not.toContain(PASSWORD);
    expect(view.database.sharedModules).toEqual(SHARED_MODULES.map((m) => m.module));
    expect(view.database.sharedModules).toContain('keys');
    expect(view.database.localModules).toEqual(LOCAL_MODULES.map((m) => m.module));
  });

  it('router status (the real CLI) shows the mode, the nodes and both stores, the password masked', async () => {
    const [a] = cluster.nodes;
    const shown = await runRouter(['status', '--home', a!.home]);
    expect(shown.exitCode, describeResult(shown)).toBe(0);
    expect(shown.stdout).toContain('  node     node-1 (cluster)\n');
    expect(shown.stdout).toContain('  nodes    2 (2 healthy)\n');
    expect(shown.stdout).toMatch(/\n {2}database postgres postgres:\/\/postgres:\*\*\*\*@127\.0\.0\.1:\d+\/\S+ healthy \([\d.]+ ms\)\n/);
    expect(shown.stdout).toContain('  redis    not configured (limits count per node)\n');
    expect(shown.stdout).not.toContain(PASSWORD);
    const json = await runRouter(['status', '--home', a!.home, '--json']);
    const status = JSON.parse(json.stdout);
    expect(status).toMatchObject({ running: true, mode: 'cluster', nodeId: 'node-1', cluster: { mode: 'cluster', database: { kind: 'postgres', healthy: true } } });
    expect(status.cluster.nodes).toHaveLength(2);
    expect(json.stdout).not.toContain(PASSWORD);
  });

  it('the log names the node-local modules at start and never shows the password', async () => {
    const [a] = cluster.nodes;
    const log = readFileSync(join(a!.home, 'router.log'), 'utf8');
    expect(log).toContain('cluster mode: shared database');
    expect(log).toContain('still keep their records in this node');
    expect(log).not.toContain(PASSWORD);
  });

  it('keys live in the shared database: a key created on one node authenticates on a node started later', async () => {
    const [a] = cluster.nodes;
    const created = await a!.manage('POST', '/api/keys', { name: 'shared', scopes: ['manage'] });
    expect(created.status).toBe(201);
    const c = await cluster.startNode();
    const res = await fetch(`${c.url}/api/keys`, { headers: { authorization: `Bearer ${created.json.key}` } });
    expect(res.status).toBe(200);
    const listed = (await res.json()) as { keys: Array<{ id: string }> };
    expect(listed.keys.map((k) => k.id)).toContain(created.json.id);
    // The row is in PostgreSQL, not in either node's SQLite file.
    const client = new pg.Client({ connectionString: cluster.databaseUrl });
    await client.connect();
    try {
      const rows = await client.query('SELECT name FROM api_keys WHERE id = $1', [created.json.id]);
      expect(rows.rows).toEqual([{ name: 'shared' }]);
    } finally {
      await client.end();
    }
  });

  it('a node holding another sealing key refuses to start with one line; no write happens', async () => {
    const other = randomBytes(32).toString('hex');
    const message = await startRefusal(cluster.databaseUrl, { ROUTER_SECRET_KEY: other, ROUTER_NODE_ID: 'wrong-key' });
    expect(message).toBe(
      'the secret key given to this node does not open the secrets of its database: start it with the same ROUTER_SECRET_KEY (or --secret-key-file) as the other nodes',
    );
    // The same refusal from the real daemon process.
    await expect(startRouter({ env: { ...cluster.env('wrong-key'), ROUTER_SECRET_KEY: other } })).rejects.toThrow('does not open the secrets of its database');
  });

  it('an unreachable database refuses the start, naming the masked URL and why (no password)', async () => {
    const port = await freePort();
    const message = await startRefusal(`postgres://router:${PASSWORD}@127.0.0.1:${port}/router`, { ROUTER_SECRET_KEY: cluster.secretKey });
    expect(message).toContain(`cannot reach the database postgres://router:****@127.0.0.1:${port}/router`);
    expect(message).toContain('ECONNREFUSED');
    expect(message).not.toContain(PASSWORD);
  });

  it('TLS options in the URL are honoured: sslmode=require against a server without TLS refuses the start', async () => {
    const message = await startRefusal(`${cluster.databaseUrl}?sslmode=require`, { ROUTER_SECRET_KEY: cluster.secretKey });
    expect(message).toContain('cannot reach the database');
    expect(message).toMatch(/does not support SSL/i);
    expect(message).not.toContain(PASSWORD);
  });

  it('a URL that is not postgres:// refuses the start with one line', async () => {
    expect(await startRefusal(`mysql://root:${PASSWORD}@127.0.0.1/x`, {})).toBe('the database URL must start with postgres:// or postgresql:// (got mysql://)');
    expect(await startRefusal('not a url', {})).toBe('the database URL is not a URL (expected postgres://user:password@host:5432/database)');
  });
});
