import { randomUUID } from 'node:crypto';
import { decryptSecret, encryptSecret } from '../store/secrets.js';
import type { Db } from '../store/db.js';
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

interface Row {
  id: string;
  provider: string;
  name: string;
  auth_kind: AuthKind;
  secrets_enc: string | null;
  expires_at: string | null;
  priority: number;
  provider_specific_data: string;
  is_active: number;
  test_status: string | null;
  last_error: string | null;
  last_tested_at: string | null;
  created_at: string;
  updated_at: string;
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

/**
 * Connections with one owner. Credentials are AES-256-GCM encrypted at rest (bound to the connection id)
 * and decrypted once into memory. `active(provider)` returns a prebuilt, priority-sorted array that is
 * replaced on every change, so routing never rebuilds lists per request.
 */
export class ConnectionStore {
  private all: Connection[] = [];
  private activeByProvider = new Map<string, readonly Connection[]>();
  /** Providers with at least one stored connection, active or not. */
  private withAny = new Set<string>();
  private readonly listeners: Array<() => void> = [];

  constructor(private readonly db: Db, private readonly keyFile: string) {
    this.reload();
    // A credentialed proxy URL stored in the clear by an older build is sealed in place.
    for (const c of this.all) {
      const plain = JSON.parse((this.db.prepare('SELECT provider_specific_data AS d FROM provider_connections WHERE id = ?').get(c.id) as { d: string }).d) as Record<string, unknown>;
      if (hasPassword(plain.proxy)) this.update(c.id, { updatedAt: c.updatedAt });
    }
  }

  private fromRow(r: Row): Connection {
    const sealed = r.secrets_enc ? (JSON.parse(decryptSecret(r.secrets_enc, this.keyFile, `connection:${r.id}`)) as Record<string, unknown>) : {};
    const { [SEALED_PROXY]: proxy, ...credential } = sealed;
    const providerSpecificData = JSON.parse(r.provider_specific_data) as Record<string, unknown>;
    // A proxy in the plain data was written later (by an older build, which knows no sealed proxy): it wins.
    if (typeof proxy === 'string' && !('proxy' in providerSpecificData)) providerSpecificData.proxy = proxy;
    return {
      id: r.id,
      provider: r.provider,
      name: r.name,
      authKind: r.auth_kind,
      credential: credential as Credential,
      expiresAt: r.expires_at,
      priority: r.priority,
      providerSpecificData,
      isActive: r.is_active === 1,
      testStatus: r.test_status,
      lastError: r.last_error,
      lastTestedAt: r.last_tested_at,
      createdAt: r.created_at,
      updatedAt: r.updated_at,
    };
  }

  private reload(): void {
    this.all = (this.db.prepare('SELECT * FROM provider_connections ORDER BY priority, created_at').all() as Row[]).map((r) => this.fromRow(r));
    const active = new Map<string, Connection[]>();
    this.withAny = new Set(this.all.map((c) => c.provider));
    for (const c of this.all) {
      if (!c.isActive) continue;
      const list = active.get(c.provider) ?? [];
      list.push(c);
      active.set(c.provider, list);
    }
    this.activeByProvider = active;
    for (const fn of this.listeners) fn();
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

  create(input: ConnectionInput): Connection {
    const id = randomUUID();
    const now = new Date().toISOString();
    const { sealed, plain } = storedParts(input.credential, input.providerSpecificData ?? {});
    this.db
      .prepare(
        `INSERT INTO provider_connections (id, provider, name, auth_kind, secrets_enc, expires_at, priority, provider_specific_data, is_active, created_at, updated_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      )
      .run(id, input.provider, input.name, input.authKind, this.encrypt(id, sealed), input.expiresAt ?? null, input.priority ?? 100,
        JSON.stringify(plain), input.isActive === false ? 0 : 1, now, now);
    this.reload();
    return this.get(id)!;
  }

  /**
   * Replaces the given fields; credential fields merge into the stored credential. `updatedAt` (sync only)
   * keeps the time of the remote's last change instead of now, so last-modified comparisons stay true.
   */
  update(
    id: string,
    patch: Partial<ConnectionInput> & { testStatus?: string | null; lastError?: string | null; lastTestedAt?: string | null; updatedAt?: string },
  ): Connection | undefined {
    const cur = this.get(id);
    if (!cur) return undefined;
    const credential = patch.credential ? { ...cur.credential, ...patch.credential } : cur.credential;
    const next = { ...cur, ...patch, credential };
    // An upstream error may quote the credential it refused: never store that whole.
    if (next.lastError) next.lastError = redactSecrets(next.lastError, [...Object.values(credential), ...Object.values(cur.credential)]);
    const { sealed, plain } = storedParts(credential, next.providerSpecificData);
    this.db
      .prepare(
        `UPDATE provider_connections SET name = ?, auth_kind = ?, secrets_enc = ?, expires_at = ?, priority = ?, provider_specific_data = ?,
         is_active = ?, test_status = ?, last_error = ?, last_tested_at = ?, updated_at = ? WHERE id = ?`,
      )
      .run(next.name, next.authKind, this.encrypt(id, sealed), next.expiresAt ?? null, next.priority, JSON.stringify(plain),
        next.isActive ? 1 : 0, next.testStatus, next.lastError, next.lastTestedAt, patch.updatedAt ?? new Date().toISOString(), id);
    this.reload();
    return this.get(id);
  }

  remove(id: string): boolean {
    const done = this.db.prepare('DELETE FROM provider_connections WHERE id = ?').run(id).changes > 0;
    this.reload();
    return done;
  }
}
