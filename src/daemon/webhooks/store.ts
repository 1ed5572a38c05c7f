import { randomUUID } from 'node:crypto';
import type { Db } from '../store/db.js';
import { decryptSecret, encryptSecret } from '../store/secrets.js';
import { generateSecret, maskSecret } from './signing.js';

import { WEBHOOK_KINDS, type WebhookKind, type WebhookRecord, type WebhookView } from '../../shared/records.js';

export { WEBHOOK_KINDS, type WebhookKind, type WebhookRecord, type WebhookView };

/** Fields accepted on create. */
export interface WebhookCreate {
  url: string;
  kind: WebhookKind;
  events: string[];
  secret?: string;
  description?: string | null;
  enabled?: boolean;
}

/** Fields accepted on update; every one optional. */
export type WebhookUpdate = Partial<Omit<WebhookCreate, 'secret'>> & { secret?: string };

interface Row extends Omit<WebhookRecord, 'events' | 'enabled' | 'kind'> {
  kind: string;
  events: string;
  enabled: number;
  secret_enc: string;
}

interface Entry {
  rec: WebhookRecord;
  secretEnc: string;
}

/**
 * Webhooks with one owner: kept in memory (the table is small and the dispatcher consults it on every
 * emitted event, which must stay cheap), written through to SQLite. Secrets are stored AES-256-GCM
 * encrypted, bound to the webhook id, and decrypted only when a delivery signs a body.
 */
/** An enabled webhook listening to `event` by name or with `*`. */
function subscribes(rec: WebhookRecord, event: string): boolean {
  return rec.enabled === 1 && (rec.events.includes('*') || rec.events.includes(event));
}

export class WebhookStore {
  private readonly byId = new Map<string, Entry>();

  constructor(
    private readonly db: Db,
    private readonly keyFile: string,
  ) {
    for (const row of db.prepare('SELECT * FROM webhooks ORDER BY created_at, id').all() as Row[]) {
      this.byId.set(row.id, { rec: fromRow(row), secretEnc: row.secret_enc });
    }
  }

  /** Every webhook, oldest first. */
  list(): WebhookRecord[] {
    return [...this.byId.values()].map((e) => e.rec);
  }

  get(id: string): WebhookRecord | undefined {
    return this.byId.get(id)?.rec;
  }

  /** The plain secret (for signing). Throws `SecretError` when the key file no longer matches. */
  secretOf(id: string): string | undefined {
    const entry = this.byId.get(id);
    return entry ? decryptSecret(entry.secretEnc, this.keyFile, `webhook:${id}`) : undefined;
  }

  /** The API view, secret masked unless `wholeSecret`. */
  view(rec: WebhookRecord, wholeSecret = false): WebhookView {
    const secret = this.secretOf(rec.id) ?? '';
    return { ...rec, secret: wholeSecret ? secret : maskSecret(secret) };
  }

  /** Creates a webhook; a missing secret is generated. Returns the record and its whole secret. */
  create(input: WebhookCreate): { record: WebhookRecord; secret: string } {
    const id = randomUUID();
    const now = new Date().toISOString();
    const secret = input.secret ?? generateSecret();
    const rec: WebhookRecord = {
      id,
      url: input.url,
      kind: input.kind,
      events: input.events,
      enabled: input.enabled === false ? 0 : 1,
      description: input.description ?? null,
      created_at: now,
      last_triggered_at: null,
      last_status: null,
      failure_count: 0,
    };
    const secretEnc = encryptSecret(secret, this.keyFile, `webhook:${id}`);
    this.db
      .prepare(
        `INSERT INTO webhooks (id, url, kind, events, secret_enc, enabled, description, created_at, updated_at, failure_count)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 0)`,
      )
      .run(id, rec.url, rec.kind, JSON.stringify(rec.events), secretEnc, rec.enabled, rec.description, now, now);
    this.byId.set(id, { rec, secretEnc });
    return { record: rec, secret };
  }

  /**
   * Applies an update. Turning `enabled` from 0 to 1 also resets failure_count: otherwise a webhook that
   * was auto-disabled at 10 failures would be disabled again by the very next fan-out of any event.
   */
  update(id: string, patch: WebhookUpdate): WebhookRecord | undefined {
    const entry = this.byId.get(id);
    if (!entry) return undefined;
    const prev = entry.rec;
    const enabled: 0 | 1 = patch.enabled === undefined ? prev.enabled : patch.enabled ? 1 : 0;
    const rec: WebhookRecord = {
      ...prev,
      url: patch.url ?? prev.url,
      kind: patch.kind ?? prev.kind,
      events: patch.events ?? prev.events,
      description: patch.description === undefined ? prev.description : patch.description,
      enabled,
      failure_count: prev.enabled === 0 && enabled === 1 ? 0 : prev.failure_count,
    };
    const secretEnc = patch.secret === undefined ? entry.secretEnc : encryptSecret(patch.secret, this.keyFile, `webhook:${id}`);
    this.db
      .prepare(
        `UPDATE webhooks SET url = ?, kind = ?, events = ?, secret_enc = ?, enabled = ?, description = ?, failure_count = ?,
         updated_at = ? WHERE id = ?`,
      )
      .run(rec.url, rec.kind, JSON.stringify(rec.events), secretEnc, rec.enabled, rec.description, rec.failure_count, new Date().toISOString(), id);
    this.byId.set(id, { rec, secretEnc });
    return rec;
  }

  /** Deletes a webhook; false when it did not exist. */
  remove(id: string): boolean {
    if (!this.byId.delete(id)) return false;
    this.db.prepare('DELETE FROM webhooks WHERE id = ?').run(id);
    return true;
  }

  /** Records one delivery attempt: last_status (0 = network error) and last_triggered_at. */
  recordAttempt(id: string, status: number, at: string): void {
    this.patchCounters(id, { last_status: status, last_triggered_at: at });
  }

  /** Records a delivery's final outcome: success resets failure_count, failure adds one. */
  recordOutcome(id: string, success: boolean): void {
    const rec = this.byId.get(id)?.rec;
    if (rec) this.patchCounters(id, { failure_count: success ? 0 : rec.failure_count + 1 });
  }

  /** Disables every enabled webhook whose failure_count reached `threshold`; returns their ids. */
  disableFailing(threshold: number): string[] {
    const ids = this.list()
      .filter((r) => r.enabled === 1 && r.failure_count >= threshold)
      .map((r) => r.id);
    for (const id of ids) this.patchCounters(id, { enabled: 0 });
    return ids;
  }

  /** Whether an enabled webhook subscribes to `event` (by name or `*`); allocates nothing. */
  hasSubscribers(event: string): boolean {
    for (const { rec } of this.byId.values()) if (subscribes(rec, event)) return true;
    return false;
  }

  /** Enabled webhooks subscribed to `event` (by name or `*`). */
  subscribers(event: string): WebhookRecord[] {
    const out: WebhookRecord[] = [];
    for (const { rec } of this.byId.values()) if (subscribes(rec, event)) out.push(rec);
    return out;
  }

  private patchCounters(id: string, patch: Partial<Pick<WebhookRecord, 'last_status' | 'last_triggered_at' | 'failure_count' | 'enabled'>>): void {
    const entry = this.byId.get(id);
    // The webhook may have been deleted while a delivery was in flight: nothing to record then.
    if (!entry) return;
    const rec = { ...entry.rec, ...patch };
    this.db
      .prepare('UPDATE webhooks SET last_status = ?, last_triggered_at = ?, failure_count = ?, enabled = ? WHERE id = ?')
      .run(rec.last_status, rec.last_triggered_at, rec.failure_count, rec.enabled, id);
    this.byId.set(id, { rec, secretEnc: entry.secretEnc });
  }
}

function fromRow(row: Row): WebhookRecord {
  // A damaged events column subscribes to nothing rather than to everything.
  let events: string[] = [];
  try {
    const parsed: unknown = JSON.parse(row.events);
    if (Array.isArray(parsed)) events = parsed.filter((e): e is string => typeof e === 'string');
  } catch {
    // keep []
  }
  return {
    id: row.id,
    url: row.url,
    kind: (WEBHOOK_KINDS as readonly string[]).includes(row.kind) ? (row.kind as WebhookKind) : 'custom',
    events,
    enabled: row.enabled === 1 ? 1 : 0,
    description: row.description,
    created_at: row.created_at,
    last_triggered_at: row.last_triggered_at,
    last_status: row.last_status,
    failure_count: row.failure_count,
  };
}
