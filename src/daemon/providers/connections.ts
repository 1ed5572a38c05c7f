import { randomUUID } from 'node:crypto';
import { decryptSecret, encryptSecret } from '../store/secrets.js';
import { LOCAL_CHANGES, type ChangeFeed } from '../store/changes.js';
import { settledLoad, type ConnectionColumns, type ProviderRepository, type StoredConnection } from './port.js';
import { maskSecret, redactSecrets } from '../../shared/mask.js';
import type { AuthKind, Credential } from './types.js';
import { maskProxyUrl } from '../net/settings.js';

/**
 * A connection's proxy URL (`providerSpecificData.proxy`) may carry a password: such a URL is sealed with the
 * credential at rest (under this key of the sealed object) and masked in replies; in memory it stays where
 * the rest of the code reads it.
 */
const SEALED_PROXY = '$proxy';

function hasPassword(url: unknown): url is string {
  if (typeof url !== 'string') return false;
  try {
    return new URL(url).password !== '';
  } catch {
    return false;
  }
}

/** The stored halves of a connection: the credential to seal (with a credentialed proxy) and the plain data. */
function storedParts(credential: Credential, data: Record<string, unknown>): { sealed: Record<string, unknown>; plain: Record<string, unknown> } {
  if (!hasPassword(data.proxy)) return { sealed: credential as Record<string, unknown>, plain: data };
  const { proxy, ...plain } = data;
  return { sealed: { ...credential, [SEALED_PROXY]: proxy }, plain };
}

/** A provider connection (account), with its credential decrypted in memory only. */
export interface Connection {
  id: string;
  provider: string;
  name: string;
  authKind: AuthKind;
  credential: Credential;
  expiresAt: string | null;
  priority: number;
  providerSpecificData: Record<string, unknown>;
  isActive: boolean;
  testStatus: string | null;
  lastError: string | null;
  lastTestedAt: string | null;
  createdAt: string;
  updatedAt: string;
}

export interface ConnectionInput {
  provider: string;
  name: string;
  authKind: AuthKind;
  credential: Credential;
  expiresAt?: string | null;
  priority?: number;
  providerSpecificData?: Record<string, unknown>;
  isActive?: boolean;
}

/**
 * The reply shape: secrets masked, never whole; `provider` as people read it (`label`: a provider node's
 * prefix), `providerId` the stored id (a node's UUID).
 */
export function publicConnection(c: Connection, label: (id: string) => string) {
  const { credential, ...rest } = c;
  return {
    ...rest,
    provider: label(c.provider),
    providerId: c.provider,
    apiKey: maskSecret(credential.apiKey),
    accessToken: maskSecret(credential.accessToken),
    refreshToken: maskSecret(credential.refreshToken),
    cookie: maskSecret(credential.cookie),
    providerSpecificData: hasPassword(c.providerSpecificData.proxy) ? { ...c.providerSpecificData, proxy: maskProxyUrl(c.providerSpecificData.proxy) } : c.providerSpecificData,
  };
}

/** What `update` accepts: connection fields, plus the test outcome and (sync only) the time of the change. */
export type ConnectionPatch = Partial<ConnectionInput> & { testStatus?: string | null; lastError?: string | null; lastTestedAt?: string | null; updatedAt?: string };

/** The change-feed topic of connection writes. */
export const CONNECTIONS_TOPIC = 'provider-connections';

const byPriority = (a: Connection, b: Connection): number =>
  a.priority - b.priority || (a.createdAt < b.createdAt ? -1 : a.createdAt > b.createdAt ? 1 : 0) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

/** Whether `patch` sets `field` (a key present with undefined keeps what is stored). */
const sets = <K extends keyof ConnectionPatch>(patch: ConnectionPatch, field: K): boolean => patch[field] !== undefined;

/**
 * Connections with one owner. Credentials are AES-256-GCM encrypted at rest (bound to the connection id;
 * the key is the cluster's shared one in cluster mode) and decrypted once into memory. `active(provider)`
 * returns a prebuilt, priority-sorted array that is replaced on every change, so routing never rebuilds
 * lists per request and never reads storage.
 *
 * Writes go to the `ProviderRepository` port first and reach the snapshot once stored; an update writes only
 * the columns it changes (a test result written on one node never puts back a credential another node just
 * renewed), and one node's writes to one connection run one after another. Each write publishes
 * `CONNECTIONS_TOPIC`; a notice from another node reloads the snapshot and calls the listeners (provider
 * directory, account pools) as a local write does.
 */
export class ConnectionStore {
  private all: readonly Connection[] = [];
  private activeByProvider = new Map<string, readonly Connection[]>();
  /** Providers with at least one stored connection, active or not. */
  private withAny = new Set<string>();
  private readonly listeners: Array<() => void> = [];
  /** Local writes so far: a reload that overlapped one loads again (it may have read the row before it). */
  private writes = 0;
  /** The last write of each connection on this node (writes to one connection are serialized). */
  private readonly queue = new Map<string, Promise<unknown>>();

  constructor(
    private readonly repo: ProviderRepository,
    private readonly keyFile: string,
    initial: readonly StoredConnection[],
    private readonly changes: ChangeFeed = LOCAL_CHANGES,
    onError: (error: unknown) => void = () => {},
  ) {
    this.set(initial.map((r) => this.open(r)), false);
    this.changes.subscribe(CONNECTIONS_TOPIC, () => this.reload().catch(onError));
  }

  /** Loads the connections; a credentialed proxy URL an older build stored in the clear is sealed in place. */
  static async create(repo: ProviderRepository, keyFile: string, changes?: ChangeFeed, onError?: (error: unknown) => void): Promise<ConnectionStore> {
    const rows = await repo.loadConnections();
    const store = new ConnectionStore(repo, keyFile, rows, changes, onError);
    for (const r of rows) {
      const plain = JSON.parse(r.providerSpecificData) as Record<string, unknown>;
      const c = store.get(r.id);
      if (c && hasPassword(plain.proxy)) await store.update(c.id, { providerSpecificData: c.providerSpecificData, updatedAt: c.updatedAt });
    }
    return store;
  }

  /** A stored row with its credential opened. */
  private open(r: StoredConnection): Connection {
    const sealed = r.secretsEnc ? (JSON.parse(decryptSecret(r.secretsEnc, this.keyFile, `connection:${r.id}`)) as Record<string, unknown>) : {};
    const { [SEALED_PROXY]: proxy, ...credential } = sealed;
    const providerSpecificData = JSON.parse(r.providerSpecificData) as Record<string, unknown>;
    // A proxy in the plain data was written later (by an older build, which knows no sealed proxy): it wins.
    if (typeof proxy === 'string' && !('proxy' in providerSpecificData)) providerSpecificData.proxy = proxy;
    const { secretsEnc: _sealed, providerSpecificData: _plain, ...rest } = r;
    return { ...rest, credential: credential as Credential, providerSpecificData };
  }

  /** Replaces the snapshot (sorted by priority, then age) and its indexes; tells the listeners. */
  private set(list: readonly Connection[], notify = true): void {
    this.all = [...list].sort(byPriority);
    const active = new Map<string, Connection[]>();
    this.withAny = new Set(this.all.map((c) => c.provider));
    for (const c of this.all) {
      if (!c.isActive) continue;
      const group = active.get(c.provider) ?? [];
      group.push(c);
      active.set(c.provider, group);
    }
    this.activeByProvider = active;
    if (notify) for (const fn of this.listeners) fn();
  }

  /** Replaces the snapshot with what storage holds now (another node wrote) and tells the listeners. */
  async reload(): Promise<void> {
    const rows = await settledLoad(() => this.writes, () => this.repo.loadConnections());
    this.set(rows.map((r) => this.open(r)));
  }

  /**
   * The connection as storage holds it now (another node may have renewed its tokens a moment ago); the
   * snapshot takes it when it differs. Undefined when it is gone.
   */
  async fresh(id: string): Promise<Connection | undefined> {
    const row = await settledLoad(() => this.writes, () => this.repo.getConnection(id));
    const cur = this.get(id);
    if (!row) {
      if (cur) this.set(this.all.filter((c) => c.id !== id));
      return undefined;
    }
    const stored = this.open(row);
    if (!cur || JSON.stringify(cur) !== JSON.stringify(stored)) this.set([...this.all.filter((c) => c.id !== id), stored]);
    return stored;
  }

  /** Called after every change (routing state subscribes to rebuild its view once). */
  onChange(fn: () => void): void {
    this.listeners.push(fn);
  }

  list(): readonly Connection[] {
    return this.all;
  }

  get(id: string): Connection | undefined {
    return this.all.find((c) => c.id === id);
  }

  /** Whether a provider has any stored connection, disabled ones included. */
  hasAny(provider: string): boolean {
    return this.withAny.has(provider);
  }

  /** Active connections of a provider, priority order. */
  active(provider: string): readonly Connection[] {
    return this.activeByProvider.get(provider) ?? [];
  }

  private encrypt(id: string, cred: Record<string, unknown>): string | null {
    // Fields may be present but undefined (a no-auth connection): only real values count as secrets.
    const set = Object.fromEntries(Object.entries(cred).filter(([, v]) => v !== undefined && v !== null));
    return Object.keys(set).length ? encryptSecret(JSON.stringify(set), this.keyFile, `connection:${id}`) : null;
  }

  /** Runs `fn` after this node's earlier writes to connection `id` (never two at once for one connection). */
  private serial<T>(id: string, fn: () => Promise<T>): Promise<T> {
    const run = (this.queue.get(id) ?? Promise.resolve()).then(fn, fn);
    const tail = run.catch(() => {});
    this.queue.set(id, tail);
    void tail.then(() => {
      if (this.queue.get(id) === tail) this.queue.delete(id);
    });
    return run;
  }

  async create(input: ConnectionInput): Promise<Connection> {
    const id = randomUUID();
    const now = new Date().toISOString();
    const { sealed, plain } = storedParts(input.credential, input.providerSpecificData ?? {});
    const row: StoredConnection = {
      id,
      provider: input.provider,
      name: input.name,
      authKind: input.authKind,
      secretsEnc: this.encrypt(id, sealed),
      expiresAt: input.expiresAt ?? null,
      priority: input.priority ?? 100,
      providerSpecificData: JSON.stringify(plain),
      isActive: input.isActive !== false,
      testStatus: null,
      lastError: null,
      lastTestedAt: null,
      createdAt: now,
      updatedAt: now,
    };
    this.writes++;
    await this.repo.insertConnection(row);
    this.changes.publish(CONNECTIONS_TOPIC);
    const c = this.open(row);
    this.set([...this.all, c]);
    return c;
  }

  /**
   * Replaces the given fields; credential fields merge into the stored credential. `updatedAt` (sync only)
   * keeps the time of the remote's last change instead of now, so last-modified comparisons stay true.
   * Undefined when there is no such connection (here, or in storage: another node removed it).
   */
  update(id: string, patch: ConnectionPatch): Promise<Connection | undefined> {
    return this.serial(id, () => this.write(id, patch));
  }

  private async write(id: string, patch: ConnectionPatch): Promise<Connection | undefined> {
    const cur = this.get(id);
    if (!cur) return undefined;
    const credential = patch.credential ? { ...cur.credential, ...patch.credential } : cur.credential;
    const providerSpecificData = patch.providerSpecificData ?? cur.providerSpecificData;
    const changed: Partial<Connection> = {};
    if (sets(patch, 'name')) changed.name = patch.name;
    if (sets(patch, 'authKind')) changed.authKind = patch.authKind;
    if (sets(patch, 'priority')) changed.priority = patch.priority;
    if (sets(patch, 'isActive')) changed.isActive = patch.isActive;
    if ('expiresAt' in patch) changed.expiresAt = patch.expiresAt ?? null;
    if ('testStatus' in patch) changed.testStatus = patch.testStatus ?? null;
    if ('lastTestedAt' in patch) changed.lastTestedAt = patch.lastTestedAt ?? null;
    // An upstream error may quote the credential it refused: never store that whole.
    if ('lastError' in patch) changed.lastError = patch.lastError ? redactSecrets(patch.lastError, [...Object.values(credential), ...Object.values(cur.credential)]) : null;
    const { credential: _c, providerSpecificData: _d, ...scalars } = changed;
    const columns: ConnectionColumns = { ...scalars, updatedAt: patch.updatedAt ?? new Date().toISOString() };
    if (patch.credential || patch.providerSpecificData) {
      const { sealed, plain } = storedParts(credential, providerSpecificData);
      columns.secretsEnc = this.encrypt(id, sealed);
      columns.providerSpecificData = JSON.stringify(plain);
      changed.credential = credential;
      changed.providerSpecificData = providerSpecificData;
    }
    this.writes++;
    const found = await this.repo.updateConnection(id, columns);
    const now = this.get(id);
    if (!found || !now) {
      if (now) this.set(this.all.filter((c) => c.id !== id));
      if (found) this.changes.publish(CONNECTIONS_TOPIC);
      return undefined;
    }
    this.changes.publish(CONNECTIONS_TOPIC);
    // Onto the snapshot as it is now (a reload may have brought another node's columns meanwhile).
    const next: Connection = { ...now, ...changed, updatedAt: columns.updatedAt };
    this.set(this.all.map((c) => (c.id === id ? next : c)));
    return next;
  }

  async remove(id: string): Promise<boolean> {
    return this.serial(id, async () => {
      this.writes++;
      const done = await this.repo.removeConnection(id);
      if (done) this.changes.publish(CONNECTIONS_TOPIC);
      if (this.get(id)) this.set(this.all.filter((c) => c.id !== id));
      return done;
    });
  }
}
