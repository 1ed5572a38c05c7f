/**
 * A proxy URL may carry credentials (`http://user:password@proxy:3128`): the outboundProxy setting is
 * stored encrypted like every other secret setting, read back after a restart, and a plain row written by an
 * older build is encrypted in place at start.
 */
import { afterEach, expect, it } from 'vitest';
import { SqlSettingsRepository } from '../../src/daemon/settings/sql-repository.js';
import '../../src/daemon/settings-sections.js';
import { SettingsStore } from '../../src/daemon/settings/store.js';
import { SqliteDriver } from '../../src/daemon/store/sqlite-driver.js';
import { startDaemon, type TestDaemon } from '../webhooks/helpers.js';

const PROXY = { url: 'http://alice:pr0xy-s3cret@proxy.internal:3128', noProxy: ['localhost'], perProvider: { groq: 'socks5://bob:s0cks-pw@127.0.0.1:1080' } };
let d: TestDaemon | undefined;
afterEach(() => d?.close());

const load = (t: TestDaemon) => SettingsStore.create(new SqlSettingsRepository(new SqliteDriver(t.services.db)), { keyFile: t.services.paths.secretKey });
const row = (t: TestDaemon) => (t.services.db.prepare("SELECT value FROM settings WHERE key = 'outboundProxy'").get() as { value: string }).value;

it('is encrypted at rest and reads back the same after a restart', async () => {
  d = await startDaemon(false);
  const r = await d.api('PATCH', '/api/settings', { outboundProxy: PROXY });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  expect(row(d)).not.toContain('pr0xy-s3cret');
  expect(row(d)).not.toContain('s0cks-pw');
  expect(JSON.parse(row(d)).enc).toMatch(/^v1\./);
  const again = await load(d);
  expect(again.get().outboundProxy).toMatchObject(PROXY);
});

it('a plain value from an older build is encrypted in place at start', async () => {
  d = await startDaemon(false);
  d.services.db.prepare("INSERT INTO settings (key, value, updated_at) VALUES ('outboundProxy', ?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value").run(JSON.stringify(PROXY), new Date().toISOString());
  const store = await load(d);
  expect(store.get().outboundProxy).toMatchObject(PROXY);
  expect(row(d)).not.toContain('pr0xy-s3cret');
});

it('replies show proxy passwords masked, and a PATCH of what GET showed keeps the stored passwords', async () => {
  d = await startDaemon(false);
  const set = await d.api('PATCH', '/api/settings', { outboundProxy: PROXY });
  const shown = (set.body as { outboundProxy: typeof PROXY }).outboundProxy;
  expect(JSON.stringify(set.body)).not.toContain('pr0xy-s3cret');
  expect(shown).toEqual({ url: 'http://alice:****@proxy.internal:3128', noProxy: ['localhost'], perProvider: { groq: 'socks5://bob:****@127.0.0.1:1080' } });
  const got = await d.api('GET', '/api/settings');
  expect(JSON.stringify(got.body)).not.toContain('pr0xy-s3cret');
  expect(JSON.stringify(got.body)).not.toContain('s0cks-pw');
  // A client that edits one thing and sends the rest back as shown.
  const back = await d.api('PATCH', '/api/settings', { outboundProxy: { ...shown, noProxy: ['localhost', '.internal'] } });
  expect(back.status, JSON.stringify(back.body)).toBe(200);
  expect(d.services.settings.get().outboundProxy).toEqual({ ...PROXY, noProxy: ['localhost', '.internal'] });
  // A new password, or a new host with the mask, is taken as written.
  await d.api('PATCH', '/api/settings', { outboundProxy: { ...shown, url: 'http://alice:n3w@proxy.internal:3128' } });
  expect(d.services.settings.get().outboundProxy.url).toBe('http://alice:n3w@proxy.internal:3128');
  await d.api('PATCH', '/api/settings', { outboundProxy: { ...shown, url: 'http://alice:****@other.internal:3128' } });
  expect(d.services.settings.get().outboundProxy.url).toBe('http://alice:****@other.internal:3128');
  expect(d.services.settings.get().outboundProxy.perProvider.groq).toBe(PROXY.perProvider.groq);
});

it("a connection's credentialed proxy URL is sealed at rest, masked in replies, and kept when sent back as shown", async () => {
  d = await startDaemon(false);
  const proxy = 'http://carol:c0nn-pw@proxy.internal:3128';
  const made = await d.api('POST', '/api/providers', { provider: 'openai', apiKey: 'sk-test-1234567890', providerSpecificData: { baseUrl: 'http://127.0.0.1:9/v1', proxy } });
  expect(made.status, JSON.stringify(made.body)).toBe(201);
  const id = made.body.id as string;
  expect(made.body.providerSpecificData.proxy).toBe('http://carol:****@proxy.internal:3128');
  const stored = () => d!.services.db.prepare('SELECT provider_specific_data AS d FROM provider_connections WHERE id = ?').get(id) as { d: string };
  expect(stored().d).not.toContain('c0nn-pw');
  expect(JSON.stringify((await d.api('GET', '/api/providers')).body)).not.toContain('c0nn-pw');
  expect(d.services.connections.get(id)!.providerSpecificData.proxy).toBe(proxy);
  // Sent back as shown: the stored password stays.
  const back = await d.api('PUT', `/api/providers/${id}`, { providerSpecificData: made.body.providerSpecificData });
  expect(back.status, JSON.stringify(back.body)).toBe(200);
  expect(d.services.connections.get(id)!.providerSpecificData.proxy).toBe(proxy);
  // Read back by a new store (a restart) the same; a plain row from an older build is sealed at start.
  d.services.db.prepare('UPDATE provider_connections SET provider_specific_data = ? WHERE id = ?').run(JSON.stringify({ baseUrl: 'http://127.0.0.1:9/v1', proxy: 'socks5://dan:old-pw@127.0.0.1:1080' }), id);
  const { ConnectionStore } = await import('../../src/daemon/providers/connections.js');
  const { SqlProviderRepository } = await import('../../src/daemon/providers/sql-repository.js');
  const { SqliteDriver } = await import('../../src/daemon/store/sqlite-driver.js');
  const repo = new SqlProviderRepository(new SqliteDriver(d.services.db));
  const again = await ConnectionStore.create(repo, d.services.paths.secretKey);
  expect(again.get(id)!.providerSpecificData.proxy).toBe('socks5://dan:old-pw@127.0.0.1:1080');
  expect(stored().d).not.toContain('old-pw');
  expect((await ConnectionStore.create(repo, d.services.paths.secretKey)).get(id)!.providerSpecificData.proxy).toBe('socks5://dan:old-pw@127.0.0.1:1080');
});
