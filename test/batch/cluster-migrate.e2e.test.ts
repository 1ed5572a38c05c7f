/**
 * A single machine keeps Batch API file contents in its state folder's `files/`; a cluster keeps them in
 * the shared database. `router cluster migrate` (a real single-machine daemon's folder into a real
 * PostgreSQL 15) therefore moves the bytes too: a cluster node started on the migrated database serves
 * the uploaded file's content, byte for byte, and the report counts what was copied.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeResult, runRouter } from '../support/cli.js';
import { postgresUnavailable, startPostgres, type PostgresServer } from '../support/postgres.js';
import { startRouter } from '../support/router-daemon.js';
import { chatLine, jsonl, sdk, upload } from './helpers.js';

const missing = postgresUnavailable();

describe.skipIf(missing)(`cluster migrate carries batch file contents${missing ? ` (skipped: ${missing})` : ''}`, () => {
  let server: PostgresServer;
  let home = '';
  let key = '';
  let fileId = '';
  // Over 1 MiB, so the content lands in more than one chunk row.
  const text = jsonl(Array.from({ length: 9000 }, (_, i) => chatLine(`line-${i}`, 'openai/gpt-4o-mini', `item ${i} ${'x'.repeat(60)}`)));
  const clusterKey = randomBytes(32);
  const work = mkdtempSync(join(tmpdir(), 'router-batch-migrate-'));
  const keyFile = join(work, 'cluster.key');

  beforeAll(async () => {
    server = await startPostgres();
    writeFileSync(keyFile, clusterKey.toString('hex'));
    const r = await startRouter({ keepHome: true });
    home = r.home;
    key = (await r.manage('POST', '/api/keys', { name: 'batch', scopes: ['proxy'] })).json.key;
    fileId = (await upload(sdk(r, key), text)).id;
    await r.stop();
  }, 90_000);

  afterAll(async () => {
    await server?.stop();
    rmSync(home, { recursive: true, force: true });
    rmSync(work, { recursive: true, force: true });
  });

  it('copies the contents of files/ into the database; a cluster node serves them', async () => {
    expect(Buffer.byteLength(text)).toBeGreaterThan(1024 * 1024);
    const url = await server.createDatabase();
    const r = await runRouter(['cluster', 'migrate', '--from-home', home, '--database-url', url, '--secret-key-file', keyFile, '--json'], { timeoutMs: 60_000 });
    expect(r.exitCode, describeResult(r)).toBe(0);
    const report = JSON.parse(r.stdout);
    expect(report.fileContents).toEqual({ files: 1, bytes: Buffer.byteLength(text), missing: [] });
    const human = await runRouter(['cluster', 'migrate', '--from-home', home, '--database-url', await server.createDatabase(), '--secret-key-file', keyFile], { timeoutMs: 60_000 });
    expect(human.stdout).toContain(`batch files: 1 contents copied (${Buffer.byteLength(text)} bytes)`);

    const node = await startRouter({ env: { ROUTER_DATABASE_URL: url, ROUTER_SECRET_KEY: clusterKey.toString('hex'), ROUTER_NODE_ID: 'gw-1' } });
    try {
      const client = sdk(node, key);
      expect((await client.files.retrieve(fileId)).bytes).toBe(Buffer.byteLength(text));
      expect(await (await client.files.content(fileId)).text()).toBe(text);
    } finally {
      await node.stop();
    }
  }, 120_000);
});
