/**
 * A management write that hits a full disk answers 507 with the standard body and a message that says so
 * (issue 16, item 4). The disk is filled for real, as SQLite sees it: the daemon's own database handle gets
 * a `max_page_count` equal to its current size, so the next page it needs fails with SQLITE_FULL exactly as
 * on a full file system. In process, through the real app and error formatter.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bootServices, closeServices } from '../../src/daemon/boot.js';
import { createApp } from '../../src/daemon/http/app.js';
import type { Services } from '../../src/daemon/services.js';

let home: string;
let services: Services;
let app: ReturnType<typeof createApp>;

beforeAll(async () => {
  home = mkdtempSync(join(tmpdir(), 'router-disk-full-'));
  services = await bootServices({ home, host: '127.0.0.1', port: 0 });
  app = createApp(services.routeTable, services);
});
afterAll(() => {
  if (services) closeServices(services);
  if (home) rmSync(home, { recursive: true, force: true });
});

async function createKey(name: string): Promise<{ status: number; body: any }> {
  const res = await app.request(
    '/api/keys',
    { method: 'POST', headers: { 'x-router-cli-token': services.cliToken, 'content-type': 'application/json' }, body: JSON.stringify({ name }) },
    { remoteAddress: '127.0.0.1' },
  );
  return { status: res.status, body: await res.json() };
}

describe('disk full', () => {
  it('a management write that cannot get a page answers 507 saying the disk is full; reads still work', async () => {
    expect((await createKey('before')).status).toBe(201);
    const pages = services.db.pragma('page_count', { simple: true }) as number;
    services.db.pragma(`max_page_count = ${pages}`);
    let reply: { status: number; body: any } | undefined;
    for (let i = 0; i < 500; i++) {
      reply = await createKey(`filler ${i} ${'x'.repeat(80)}`);
      if (reply.status !== 201) break;
    }
    expect(reply!.status, JSON.stringify(reply!.body)).toBe(507);
    expect(reply!.body).toMatchObject({ error: { message: expect.stringMatching(/disk is full/i), type: 'server_error', code: 'insufficient_storage' } });
    const list = await app.request('/api/keys', { headers: { 'x-router-cli-token': services.cliToken } }, { remoteAddress: '127.0.0.1' });
    expect(list.status).toBe(200);
    services.db.pragma('max_page_count = 1073741823');
    expect((await createKey('after')).status).toBe(201);
  });
});
