/**
 * A proxy URL may carry credentials (`http://user:password@proxy:3128`): the outboundProxy setting is
 * stored encrypted like every other secret setting, read back after a restart, and a plain row written by an
 * older build is encrypted in place at start.
 */
import { afterEach, expect, it } from 'vitest';
import { SettingsStore } from '../../src/daemon/settings/store.js';
import { startDaemon, type TestDaemon } from '../webhooks/helpers.js';

const PROXY = { url: 'http://alice:pr0xy-s3cret@proxy.internal:3128', noProxy: ['localhost'], perProvider: { groq: 'socks5://bob:s0cks-pw@127.0.0.1:1080' } };
let d: TestDaemon | undefined;
afterEach(() => d?.close());

const row = (t: TestDaemon) => (t.services.db.prepare("SELECT value FROM settings WHERE key = 'outboundProxy'").get() as { value: string }).value;

it('is encrypted at rest and reads back the same after a restart', async () => {
  d = startDaemon(false);
  const r = await d.api('PATCH', '/api/settings', { outboundProxy: PROXY });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  expect(row(d)).not.toContain('pr0xy-s3cret');
  expect(row(d)).not.toContain('s0cks-pw');
  expect(JSON.parse(row(d)).enc).toMatch(/^v1\./);
  const again = new SettingsStore(d.services.db, d.services.paths.secretKey);
  expect(again.get().outboundProxy).toMatchObject(PROXY);
});

it('a plain value from an older build is encrypted in place at start', () => {
  d = startDaemon(false);
  d.services.db.prepare("INSERT INTO settings (key, value, updated_at) VALUES ('outboundProxy', ?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value").run(JSON.stringify(PROXY), new Date().toISOString());
  const store = new SettingsStore(d.services.db, d.services.paths.secretKey);
  expect(store.get().outboundProxy).toMatchObject(PROXY);
  expect(row(d)).not.toContain('pr0xy-s3cret');
});
