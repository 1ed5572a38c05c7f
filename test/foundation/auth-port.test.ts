/**
 * The dashboard sessions' and password's storage ports on both adapters (migrated temp SQLite, real
 * PostgreSQL 15): expiry pruning, revocation, a session opened on one node valid on another after the change
 * notice, the password shared by every node, and a snapshot that stays put when a write fails.
 */
import { describe, expect, it } from 'vitest';
import { PasswordStore } from '../../src/daemon/auth/password.js';
import type { SessionRepository } from '../../src/daemon/auth/port.js';
import { SESSION_TTL_MS, SessionStore } from '../../src/daemon/auth/sessions.js';
import { SqlPasswordRepository, SqlSessionRepository } from '../../src/daemon/auth/sql-repository.js';
import { linkedFeeds } from '../support/port-fixtures.js';
import { adapterTitle, storageAdapters } from '../support/storage.js';

for (const adapter of storageAdapters()) {
  describe.skipIf(adapter.unavailable)(adapterTitle('SessionRepository and PasswordRepository', adapter), () => {
    const open = async () => {
      const storage = await adapter.open();
      return { driver: storage.driver, connect: () => storage.connect() };
    };

    it('stores sessions by hash with their expiry (unix ms beyond 32 bits); loading drops the expired ones', async () => {
      const { driver } = await open();
      const repo = new SqlSessionRepository(driver);
      const now = 1_800_000_000_000;
      await repo.insert({ hash: 'a'.repeat(64), expiresAt: now + SESSION_TTL_MS }, '2027-01-15T08:00:00.000Z');
      await repo.insert({ hash: 'b'.repeat(64), expiresAt: now - 1 }, '2027-01-01T00:00:00.000Z');
      await repo.insert({ hash: 'c'.repeat(64), expiresAt: now }, '2027-01-01T00:00:00.000Z');
      expect(await repo.loadLive(now)).toEqual([{ hash: 'a'.repeat(64), expiresAt: now + SESSION_TTL_MS }]);
      expect((await driver.query<{ n: number }>('SELECT COUNT(*) AS n FROM sessions'))[0]?.n).toBe(1);
      await repo.insert({ hash: 'd'.repeat(64), expiresAt: now + 5 }, '2027-01-01T00:00:00.000Z');
      await expect(repo.insert({ hash: 'd'.repeat(64), expiresAt: now + 9 }, '2027-01-01T00:00:00.000Z')).rejects.toThrow();
      await repo.remove('a'.repeat(64));
      expect(await repo.loadLive(now)).toEqual([{ hash: 'd'.repeat(64), expiresAt: now + 5 }]);
      await repo.removeAll();
      expect(await repo.loadLive(now)).toEqual([]);
    });

    it('a session opened on one node is valid on another after the notice; logout and revoke-all reach it too', async () => {
      const { driver, connect } = await open();
      const [feedA, feedB] = linkedFeeds(2);
      const one = await SessionStore.create(new SqlSessionRepository(driver), feedA);
      const two = await SessionStore.create(new SqlSessionRepository(await connect()), feedB);
      const a = await one.create();
      const b = await one.create();
      expect(one.isValid(a.token)).toBe(true);
      await expect.poll(() => two.isValid(a.token) && two.isValid(b.token), { timeout: 2000 }).toBe(true);
      await two.revoke(a.token);
      await expect.poll(() => one.isValid(a.token), { timeout: 2000 }).toBe(false);
      expect(one.isValid(b.token)).toBe(true);
      await one.revokeAll();
      await expect.poll(() => two.isValid(b.token), { timeout: 2000 }).toBe(false);
    });

    it('an expired session is refused and its row deleted; a restart does not bring it back', async () => {
      const { driver } = await open();
      let clock = 1_800_000_000_000;
      const repo = new SqlSessionRepository(driver);
      const store = await SessionStore.create(repo, undefined, undefined, () => clock);
      const s = await store.create();
      clock += SESSION_TTL_MS;
      expect(store.isValid(s.token)).toBe(false);
      await expect.poll(async () => (await driver.query<{ n: number }>('SELECT COUNT(*) AS n FROM sessions'))[0]?.n, { timeout: 2000 }).toBe(0);
      clock -= 1000;
      const restarted = await SessionStore.create(repo, undefined, undefined, () => clock);
      expect(restarted.isValid(s.token)).toBe(false);
    });

    it('every node checks the one password; none set answers false', async () => {
      const { driver, connect } = await open();
      const one = new PasswordStore(new SqlPasswordRepository(driver));
      const two = new PasswordStore(new SqlPasswordRepository(await connect()));
      expect(await two.isSet()).toBe(false);
      expect(await two.verify('anything-at-all')).toBe(false);
      await one.set('first-password');
      await one.set('second-password');
      expect(await two.isSet()).toBe(true);
      expect(await two.verify('second-password')).toBe(true);
      expect(await two.verify('first-password')).toBe(false);
      expect((await driver.query<{ n: number }>('SELECT COUNT(*) AS n FROM auth_password'))[0]?.n).toBe(1);
    });

    it('a failed write changes nothing in memory: no session handed out, none forgotten', async () => {
      const { driver } = await open();
      const repo = new SqlSessionRepository(driver);
      const good = await SessionStore.create(repo);
      const kept = await good.create();
      const down = () => Promise.reject(new Error('database down'));
      const failing: SessionRepository = { loadLive: (now) => repo.loadLive(now), insert: down, remove: down, removeAll: down };
      const store = await SessionStore.create(failing);
      await expect(store.create()).rejects.toThrow('database down');
      await expect(store.revoke(kept.token)).rejects.toThrow('database down');
      await expect(store.revokeAll()).rejects.toThrow('database down');
      expect(store.isValid(kept.token)).toBe(true);
    });
  });
}
