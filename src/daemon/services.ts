import type { StatePaths } from '../shared/paths.js';
import type { PasswordStore } from './auth/password.js';
import type { SessionStore } from './auth/sessions.js';
import type { KeyStore } from './keys/store.js';
import type { Logger } from './logger.js';
import type { SettingsStore } from './settings/store.js';
import type { Db } from './store/db.js';
import type { RouteDef } from './http/routes.js';
import type { EventBus } from './events/bus.js';
import type { WebhookService } from './webhooks/service.js';
import type { ConnectionStore } from './providers/connections.js';
import type { ProviderDirectory } from './providers/directory.js';
import type { SyncedModels } from './providers/models.js';
import type { NodeStore } from './providers/nodes.js';

/** Everything handlers may use, built once at start and passed to every route through its context. */
export interface Services {
  db: Db;
  paths: StatePaths;
  version: string;
  /** Unix ms when the daemon started. */
  startedAt: number;
  listen: { host: string; port: number; url: string };
  settings: SettingsStore;
  /** Provider connections (accounts), credentials decrypted in memory. */
  connections: ConnectionStore;
  /** Custom provider nodes. */
  nodes: NodeStore;
  /** Models synced from upstreams. */
  syncedModels: SyncedModels;
  /** Provider lookup and model -> target resolution. */
  providers: ProviderDirectory;
  keys: KeyStore;
  sessions: SessionStore;
  passwords: PasswordStore;
  /** In-process event bus (request.completed, provider.error...); emit is synchronous and never throws. */
  events: EventBus;
  /** Webhook store and dispatcher, subscribed to `events`. */
  webhooks: WebhookService;
  /** The CLI token this daemon accepts (derived once at start). */
  cliToken: string;
  log: Logger;
  /** The route table the app serves (for the OpenAPI document). */
  routeTable: readonly RouteDef[];
  /** Begins a graceful shutdown (used by the shutdown route). */
  requestShutdown: (reason: string) => void;
}
