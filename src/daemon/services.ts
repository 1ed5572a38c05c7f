import type { StatePaths } from '../shared/paths.js';
import type { PasswordStore } from './auth/password.js';
import type { SessionStore } from './auth/sessions.js';
import type { KeyStore } from './keys/store.js';
import type { Logger } from './logger.js';
import type { SettingsStore } from './settings/store.js';
import type { Db } from './store/db.js';
import type { RouteDef } from './http/routes.js';

/** Everything handlers may use, built once at start and passed to every route through its context. */
export interface Services {
  db: Db;
  paths: StatePaths;
  version: string;
  /** Unix ms when the daemon started. */
  startedAt: number;
  listen: { host: string; port: number; url: string };
  settings: SettingsStore;
  keys: KeyStore;
  sessions: SessionStore;
  passwords: PasswordStore;
  /** The CLI token this daemon accepts (derived once at start). */
  cliToken: string;
  log: Logger;
  /** The route table the app serves (for the OpenAPI document). */
  routeTable: readonly RouteDef[];
  /** Begins a graceful shutdown (used by the shutdown route). */
  requestShutdown: (reason: string) => void;
}
