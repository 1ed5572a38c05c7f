/** A quota service over a real migrated database in a temp folder, with a clock the test moves. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AuthInfo } from '../../src/daemon/auth/pipeline.js';
import { EventBus } from '../../src/daemon/events/bus.js';
import type { RouterEvent } from '../../src/daemon/events/types.js';
import { RouterError } from '../../src/daemon/http/errors.js';
import { KeyStore, type KeyRecord } from '../../src/daemon/keys/store.js';
import { loadKeysSync, SqlKeyRepository } from '../../src/daemon/keys/sql-repository.js';
import { QuotaService } from '../../src/daemon/quotas/index.js';
import { loadSettingsSync, SqlSettingsRepository } from '../../src/daemon/settings/sql-repository.js';
import '../../src/daemon/settings-sections.js';
import { SettingsStore } from '../../src/daemon/settings/store.js';
import { closeDatabase, openDatabase, type Db } from '../../src/daemon/store/db.js';
import { migrate } from '../../src/daemon/store/migrate.js';
import { SqliteDriver } from '../../src/daemon/store/sqlite-driver.js';

/** Monday 2025-03-10 22:00:00 UTC: two hours before midnight, 21 days and 2 hours before April. */
export const T0 = Date.UTC(2025, 2, 10, 22, 0, 0);

export interface Env {
  dir: string;
  db: Db;
  settings: SettingsStore;
  keys: KeyStore;
  events: EventBus;
  quotas: QuotaService;
  /** quota.exceeded events seen so far. */
  seen: RouterEvent<'quota.exceeded'>[];
  clock: { now: number };
  /** Closes the quota service (flush) and the database, then opens everything again from the same folder. */
  restart(): void;
  close(): void;
}

export function makeEnv(start = T0): Env {
  const dir = mkdtempSync(join(tmpdir(), 'router-quotas-'));
  const clock = { now: start };
  const env = { dir, clock, seen: [] as RouterEvent<'quota.exceeded'>[] } as Env;
  const open = () => {
    env.db = openDatabase(join(dir, 'router.db'));
    migrate(env.db);
    const storage = new SqliteDriver(env.db);
    env.settings = new SettingsStore(new SqlSettingsRepository(storage), loadSettingsSync(storage));
    env.keys = new KeyStore(new SqlKeyRepository(storage), loadKeysSync(storage));
    env.events = new EventBus();
    env.events.on('quota.exceeded', (e) => void env.seen.push(e));
    env.quotas = new QuotaService({
      db: env.db,
      settings: env.settings,
      keys: env.keys,
      events: env.events,
      now: () => clock.now,
      flushIntervalMs: 0,
    });
  };
  const shut = () => {
    env.quotas.close();
    // On SQLite the flush writes during the call, before the database closes.
    void env.keys.flush();
    closeDatabase(env.db);
  };
  open();
  env.restart = () => {
    shut();
    open();
  };
  env.close = () => {
    shut();
    rmSync(dir, { recursive: true, force: true });
  };
  return env;
}

/** The auth info the pipeline builds for an API-key caller. */
export function keyAuth(key: KeyRecord, remoteAddress = '203.0.113.7'): AuthInfo {
  return { via: 'api-key', key, loopback: false, remoteAddress };
}

/** The auth info of a dashboard-session caller (no key). */
export function sessionAuth(remoteAddress = '203.0.113.7'): AuthInfo {
  return { via: 'session', loopback: false, remoteAddress };
}

/** Runs `fn` and returns the RouterError it throws (fails when it does not throw one). */
export function refusal(fn: () => void): RouterError {
  try {
    fn();
  } catch (err) {
    if (err instanceof RouterError) return err;
    throw err;
  }
  throw new Error('expected a RouterError, nothing was thrown');
}
