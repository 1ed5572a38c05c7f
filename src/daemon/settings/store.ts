import { decryptSecret, encryptSecret } from '../store/secrets.js';
import { LOCAL_CHANGES, type ChangeFeed } from '../store/changes.js';
import type { SettingRow, SettingsRepository } from './port.js';
import { settingsSchema, type Settings, type SettingsPatch } from './definitions.js';
import { settingsSections } from './registry.js';

// The settings' definitions live in definitions.ts; importers of the store take them from here too.
export * from './definitions.js';

type Listener = (next: Settings, changed: (keyof Settings)[]) => void;

/** Settings that hold credentials: stored encrypted (`{"enc": ...}`), never as plain text. */
const SECRET_SETTINGS: ReadonlySet<string> = new Set<keyof Settings>(['telegramBotToken']);
/** Object settings with one credential field, stored encrypted the same way (sections `sealed: { field }`). */
export function nestedSecrets(): Readonly<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const s of settingsSections()) if (s.sealed && s.sealed !== 'whole') out[s.key] = s.sealed.field;
  return out;
}
/** Object settings whose strings may carry credentials (a proxy URL's `user:password@`): the whole value stored encrypted. */
function objectSecrets(): ReadonlySet<string> {
  return new Set(settingsSections().filter((s) => s.sealed === 'whole').map((s) => s.key));
}

/** What the stored rows hold once opened. */
interface Decoded {
  settings: Settings;
  /** Time of the last write per stored key. */
  times: Map<string, string>;
  /** Rows of keys the schema does not know (the note vault's credentials, the sealing check), as stored. */
  extra: Map<string, string>;
  /** Credential settings still stored in plain text (written by an older version). */
  plainSecrets: (keyof Settings)[];
}

export interface SettingsStoreOptions {
  /** The key file secrets are sealed with (the daemon's); without it secret settings are stored as given. */
  keyFile?: string;
  /** Other cluster nodes' writes (default: one machine, none). */
  changes?: ChangeFeed;
  /** A reload asked by another node failed (the snapshot stays as it was). */
  onError?: (error: unknown) => void;
}

/** The change-feed topic of settings writes. */
export const SETTINGS_TOPIC = 'settings';

/**
 * Settings with one owner: read from memory, written through the `SettingsRepository` port (SQLite, or
 * PostgreSQL in cluster mode) before the snapshot changes, listeners told of changes (local writes and
 * `reload()` alike). With a key file (the daemon), secret settings are AES-256-GCM encrypted at rest like
 * connection credentials; a plain value written by an older version is encrypted in place at start.
 */
export class SettingsStore {
  private current: Settings;
  private times: Map<string, string>;
  private extra: Map<string, string>;
  private readonly listeners: Listener[] = [];
  private readonly keyFile: string | undefined;
  private readonly changes: ChangeFeed;

  private readonly plainSecrets: (keyof Settings)[];

  /**
   * `rows`: the settings as stored (loaded by the caller: `repo.loadAll()`, or synchronously from the
   * embedded file with `loadSettingsSync`). The daemon uses `create`, which also re-seals plain secrets.
   */
  constructor(
    private readonly repo: SettingsRepository,
    rows: readonly SettingRow[],
    opts: SettingsStoreOptions = {},
  ) {
    this.keyFile = opts.keyFile;
    this.changes = opts.changes ?? LOCAL_CHANGES;
    const decoded = this.decode(rows);
    this.current = decoded.settings;
    this.times = decoded.times;
    this.extra = decoded.extra;
    this.plainSecrets = decoded.plainSecrets;
    // The reload's promise is returned for feeds that wait for their subscribers (tests); it never rejects.
    this.changes.subscribe(SETTINGS_TOPIC, () => this.reload().catch((err: unknown) => opts.onError?.(err)));
  }

  /** Loads the stored settings, seals plain secrets of older versions in place, follows other nodes' writes. */
  static async create(repo: SettingsRepository, opts: SettingsStoreOptions = {}): Promise<SettingsStore> {
    const store = new SettingsStore(repo, await repo.loadAll(), opts);
    if (store.plainSecrets.length) await store.write(store.current, store.plainSecrets.splice(0));
    return store;
  }

  private decode(rows: readonly SettingRow[]): Decoded {
    const stored: Record<string, unknown> = {};
    const times = new Map<string, string>();
    const extra = new Map<string, string>();
    const plainSecrets: (keyof Settings)[] = [];
    for (const row of rows) {
      times.set(row.key, row.updatedAt);
      if (!(row.key in settingsSchema().shape)) {
        extra.set(row.key, row.value);
        continue;
      }
      const key = row.key as keyof Settings;
      let value: unknown;
      try {
        value = JSON.parse(row.value) as unknown;
      } catch {
        continue; // unreadable: the default applies
      }
      if (objectSecrets().has(key) && value && typeof value === 'object' && 'enc' in value) {
        const opened = this.open(key, value);
        if (typeof opened === 'string') stored[key] = JSON.parse(opened) as unknown;
      } else if (objectSecrets().has(key)) {
        if (this.keyFile) plainSecrets.push(key);
        stored[key] = value;
      } else if (SECRET_SETTINGS.has(key)) {
        const opened = this.open(key, value);
        if (opened === undefined) continue;
        if (typeof value === 'string' && value !== '' && this.keyFile) plainSecrets.push(key);
        stored[key] = opened;
      } else if (nestedSecrets()[key] && value && typeof value === 'object') {
        const field = nestedSecrets()[key]!;
        const inner = (value as Record<string, unknown>)[field];
        stored[key] = { ...value, [field]: inner === undefined ? '' : (this.open(`${key}.${field}`, inner) ?? '') };
      } else stored[key] = value;
    }
    // A stored value that no longer validates (older bounds) falls back to its default rather than failing start.
    const parsed = settingsSchema().safeParse(stored);
    return { settings: (parsed.success ? parsed.data : settingsSchema().parse({})) as Settings, times, extra, plainSecrets: parsed.success ? plainSecrets : [] };
  }

  /** A secret setting's value as stored -> plain; undefined when it cannot be read (key file changed). */
  private open(key: string, value: unknown): unknown {
    if (typeof value === 'string') return value; // '' (unset) or written before encryption
    if (value && typeof value === 'object' && typeof (value as { enc?: unknown }).enc === 'string' && this.keyFile) {
      try {
        return decryptSecret((value as { enc: string }).enc, this.keyFile, `setting:${key}`);
      } catch {
        return undefined;
      }
    }
    return undefined;
  }

  /** A setting's value as stored: JSON, secrets encrypted (an empty secret stays ''). */
  private stored(key: keyof Settings, value: unknown): string {
    if (objectSecrets().has(key) && this.keyFile) return JSON.stringify({ enc: encryptSecret(JSON.stringify(value), this.keyFile, `setting:${key}`) });
    if (SECRET_SETTINGS.has(key) && this.keyFile && typeof value === 'string' && value !== '') {
      return JSON.stringify({ enc: encryptSecret(value, this.keyFile, `setting:${key}`) });
    }
    const field = nestedSecrets()[key];
    if (field && this.keyFile && value && typeof value === 'object') {
      const inner = (value as Record<string, unknown>)[field];
      if (typeof inner === 'string' && inner !== '') {
        return JSON.stringify({ ...value, [field]: { enc: encryptSecret(inner, this.keyFile, `setting:${key}.${field}`) } });
      }
    }
    return JSON.stringify(value);
  }

  private async write(next: Settings, keys: readonly (keyof Settings)[]): Promise<void> {
    const now = new Date().toISOString();
    await this.repo.putMany(
      keys.map((key) => ({ key, value: this.stored(key, next[key]) })),
      now,
    );
    for (const key of keys) this.times.set(key, now);
  }

  get(): Settings {
    return this.current;
  }

  /** When each stored setting was last written (ISO-8601), by key; settings never written have none. */
  updatedTimes(): ReadonlyMap<string, string> {
    return this.times;
  }

  /** Applies a validated patch atomically (stored first) and notifies listeners. */
  async update(patch: SettingsPatch): Promise<Settings> {
    const changed = Object.keys(patch) as (keyof Settings)[];
    const next = { ...this.current, ...patch };
    await this.write(next, changed);
    this.current = next;
    this.changes.publish(SETTINGS_TOPIC);
    this.notify(next, changed);
    return next;
  }

  /**
   * Replaces the snapshot with what storage holds now (another node wrote) and tells listeners which
   * settings changed, as a local write would.
   */
  async reload(): Promise<void> {
    const decoded = this.decode(await this.repo.loadAll());
    const prev = this.current;
    const changed = (Object.keys(decoded.settings) as (keyof Settings)[]).filter((k) => JSON.stringify(prev[k]) !== JSON.stringify(decoded.settings[k]));
    this.current = decoded.settings;
    this.times = decoded.times;
    this.extra = decoded.extra;
    if (changed.length) this.notify(decoded.settings, changed);
  }

  private notify(next: Settings, changed: (keyof Settings)[]): void {
    for (const fn of this.listeners) fn(next, changed);
  }

  onChange(fn: Listener): void {
    this.listeners.push(fn);
  }

  /**
   * A row of a key the settings schema does not know (the note vault's credentials), as stored; the
   * caller seals and opens its value. Read from the snapshot, like every setting.
   */
  extraRow(key: string): string | undefined {
    if (key in settingsSchema().shape) throw new Error(`${key} is a setting: use get()/update()`);
    return this.extra.get(key);
  }

  /** Stores such a row (the value already sealed by the caller) and tells the other nodes. */
  async putExtraRow(key: string, value: string): Promise<void> {
    if (key in settingsSchema().shape) throw new Error(`${key} is a setting: use update()`);
    const now = new Date().toISOString();
    await this.repo.putMany([{ key, value }], now);
    this.extra.set(key, value);
    this.times.set(key, now);
    this.changes.publish(SETTINGS_TOPIC);
  }

  /** Removes such a row; false when there was none. */
  async removeExtraRow(key: string): Promise<boolean> {
    if (key in settingsSchema().shape) throw new Error(`${key} is a setting`);
    const removed = await this.repo.remove(key);
    this.extra.delete(key);
    this.times.delete(key);
    if (removed) this.changes.publish(SETTINGS_TOPIC);
    return removed;
  }
}
