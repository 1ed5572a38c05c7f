import { z } from 'zod';
import { decryptSecret, encryptSecret } from '../store/secrets.js';
import type { Db } from '../store/db.js';
import { compressionSettingsSchema } from '../compression/settings.js';
import { maskOutboundProxy, outboundProxySettingsSchema } from '../net/settings.js';
import { cloudSyncSettingsSchema, SECRET_MASK } from '../sync/settings.js';
import { agentSettingsSchema } from '../mcp/settings.js';
import { oauthEndpointsSchema } from '../oauth/settings.js';

const MiB = 1024 * 1024;

/** Every setting, its type, bounds and default. PATCH validates against this schema, unknown keys rejected. */
export const settingsSchema = z.object({
  /** When false, loopback callers may use management routes without a credential (CONTRACT). */
  requireLogin: z.boolean().default(true),
  /** Skip the public-destination check for webhooks (receivers on this machine). Logged at start when on. */
  allowPrivateWebhookDestinations: z.boolean().default(false),
  /** Let manage-scope keys reach /api/copilot/* from non-loopback callers (spec, Authentication: /api/copilot/* is loopback-only unless a manage-scope key opts in). */
  copilotAllowManageKey: z.boolean().default(false),
  /**
   * Legacy single-step keychain import (POST /api/providers/keychain/import without confirmedAccounts
   * imports everything discovered). Deprecated, logged when used, to be removed (spec, Versioning 5).
   */
  keychainLegacyImport: z.boolean().default(false),
  /** Extra browser origins router trusts besides its loopback ones: state-changing requests, the live WebSocket, and their hosts as Host names (docs/security.md). */
  allowedOrigins: z.array(z.string().url().max(200)).max(50).default([]),
  /** Where `router catalog update` fetches the model catalog: a models.dev api.json document (docs/catalog.md). */
  catalogUrl: z
    .string()
    .url()
    .max(500)
    .regex(/^https?:\/\//, 'expected an http:// or https:// URL')
    .default('https://models.dev/api.json'),
  /** Days usage rows (request log, analytics) are kept; older rows are pruned at start and daily. */
  usageRetentionDays: z.number().int().min(1).max(3650).default(30),
  /**
   * 'batched': usage rows are committed within about 100 ms of a request's end (a crash of the daemon loses
   * at most the last ~200 ms of rows). 'reply': a proxied reply ends only once its row is committed and
   * fsynced (costs latency per reply; docs/usage.md).
   */
  usageDurability: z.enum(['batched', 'reply']).default('batched'),
  /** Body limit of client (proxy) routes. */
  maxRequestBodyBytes: z.number().int().min(1024).max(256 * MiB).default(32 * MiB),
  /**
   * Most bytes of one SSE line or event read from an upstream stream (and of what a stream may send before
   * its first content). Past it the request ends with the client format's error (docs/security.md, "Bounds
   * on uploads and upstream reads"). 16 MiB holds a streamed base64 image; raise it for larger ones.
   */
  maxUpstreamEventBytes: z.number().int().min(64 * 1024).max(64 * MiB).default(16 * MiB),
  /** Consecutive breaker-eligible failures (network, timeout, 5xx) that open a provider's circuit. */
  breakerFailureThreshold: z.number().int().min(1).max(1000).default(5),
  /** How long an open circuit stays open before a half-open probe, ms. */
  breakerCooldownMs: z.number().int().min(100).max(3_600_000).default(30_000),
  /** How accounts of one provider are chosen: fill-first (priority), round-robin or least-used. */
  accountStrategy: z.enum(['fill-first', 'round-robin', 'least-used']).default('fill-first'),
  /** Deadline of one client request across all failover attempts, ms. */
  requestDeadlineMs: z.number().int().min(1000).max(3_600_000).default(600_000),
  /**
   * Longest wait for an upstream's first byte, ms: a non-streaming reply's headers, a stream's first
   * content. Inside combos too (a combo's targetTimeoutMs, when shorter, wins). Reasoning models may think
   * for minutes before their first byte; an upstream silent for longer is treated as hung (504, failover).
   */
  upstreamFirstByteTimeoutMs: z.number().int().min(1000).max(3_600_000).default(300_000),
  /** Requests per UTC day of an API key without its own dailyRequestLimit; 0 = unlimited. */
  defaultDailyRequestLimit: z.number().int().min(0).max(100_000_000).default(0),
  /** Relay route: requests per minute per API key; 0 = no per-key limit. */
  relayRequestsPerMinutePerKey: z.number().int().min(0).max(1_000_000).default(60),
  /** Relay route: requests per minute per client IP; 0 = no per-IP limit. */
  relayRequestsPerMinutePerIp: z.number().int().min(0).max(1_000_000).default(120),
  /**
   * The Responses WebSocket towards providers that speak it (codex; docs/responses-websocket.md, "Upstream
   * WebSocket"): 'auto' for responses whose client came over router's own Responses WebSocket (one upstream
   * socket per client socket), 'always' for every streamed or reassembled Responses call to them, 'never'.
   */
  responsesUpstreamWebSocket: z.enum(['auto', 'always', 'never']).default('auto'),
  /** Keep the last 200 proxied requests with headers and bodies for the traffic inspector (router inspect). */
  captureTraffic: z.boolean().default(false),
  /** Bytes of each captured body kept (client and upstream, request and response); longer ones are cut and marked truncated. */
  captureMaxBodyBytes: z.number().int().min(1024).max(16 * MiB).default(1 * MiB),
  /** Translations kept for GET /api/translator/history while captureTraffic is on (0: none). */
  translatorHistorySize: z.number().int().min(0).max(200).default(100),
  /** Body limit of every other route. */
  maxManagementBodyBytes: z.number().int().min(1024).max(64 * MiB).default(1 * MiB),
  /**
   * Telegram bot token used by webhooks of kind telegram (`<bot id>:<secret>`); '' when unset. Replies of
   * the settings routes mask it (see `publicSettings`); the masked form is accepted here only so that a
   * PATCH echoing a GET reply validates, and the route then keeps the stored token.
   */
  telegramBotToken: z
    .string()
    .max(200)
    .regex(/^(\d+:[A-Za-z0-9_-]+|\S{0,10}\.\.\.)?$/, 'expected <bot id>:<token>')
    .default(''),
  /** Response cache on or off for every key (requests and keys still opt in; see docs/cache.md). */
  cacheEnabled: z.boolean().default(true),
  /** How long a cached reply is served after it was stored, seconds (1 s to 30 days). */
  cacheTtlSeconds: z.number().int().min(1).max(30 * 86_400).default(3600),
  /** Cached replies held at most; the least recently used are evicted beyond it. */
  cacheMaxEntries: z.number().int().min(1).max(1_000_000).default(10_000),
  /** Bytes of cached replies held at most (in memory and in the database); LRU eviction beyond it. */
  cacheMaxBytes: z.number().int().min(1024).max(4096 * MiB).default(64 * MiB),
  /** Reasoning cache: thinking and signatures of tool-call turns, re-inserted when a client drops them (docs/operations.md). */
  reasoningCacheEnabled: z.boolean().default(true),
  /** Reasoning-cache entries held at most (one per assistant turn that made tool calls); LRU beyond it. */
  reasoningCacheMaxEntries: z.number().int().min(1).max(1_000_000).default(5000),
  /** Bytes of cached reasoning held at most; LRU beyond it. */
  reasoningCacheMaxBytes: z.number().int().min(1024).max(1024 * MiB).default(32 * MiB),
  /** How long a cached reasoning entry is kept after its reply, seconds (default a day). */
  reasoningCacheTtlSeconds: z.number().int().min(1).max(30 * 86_400).default(86_400),
  /** A backup of the database every day (state folder `backups/`; docs/operations.md). */
  dailyBackups: z.boolean().default(true),
  /** Automatic backups (daily, before a migration, before an import) kept; older ones are removed. Manual ones stay. */
  backupRetention: z.number().int().min(1).max(1000).default(10),
  /** Let loopback callers read GET /metrics without a credential (a local Prometheus); off: management auth. */
  metricsOpenOnLoopback: z.boolean().default(false),
  /**
   * OTLP/HTTP traces URL (e.g. `http://127.0.0.1:4318/v1/traces`); '' = off unless OTEL_EXPORTER_OTLP_ENDPOINT
   * or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT is set. Read at start (docs/observability.md).
   */
  otelEndpoint: z.union([z.literal(''), z.string().url().max(500)]).default(''),
  /**
   * OTLP/HTTP encoding of exported traces: `http/protobuf` (the OpenTelemetry default) or `http/json`; ''
   * takes OTEL_EXPORTER_OTLP_TRACES_PROTOCOL / OTEL_EXPORTER_OTLP_PROTOCOL, else http/protobuf. Read at start.
   */
  otelProtocol: z.enum(['', 'http/protobuf', 'http/json']).default(''),
  /** Export prompt content on request spans (credentials masked as in traffic capture); off by default. */
  otelCaptureContent: z.boolean().default(false),
  /** Send a W3C traceparent (router's request span as parent) to upstream providers. */
  otelPropagateTraceparent: z.boolean().default(false),
  /** Batch requests (`/v1/batches` run by router) in flight at once, across every batch (docs/batch.md). */
  batchConcurrency: z.number().int().min(1).max(256).default(8),
  /** Largest file `POST /v1/files` takes, bytes (OpenAI's 200 MB by default); 413 past it. */
  batchFileMaxBytes: z.number().int().min(1024).max(2048 * MiB).default(200 * 1000 * 1000),
  /** How often a native-mode batch is polled at its provider, ms. */
  batchPollIntervalMs: z.number().int().min(100).max(3_600_000).default(30_000),
  /**
   * A Responses WebSocket with no response in progress and no frame either way for this long is closed with
   * 1000 `idle timeout`, ms (docs/responses-websocket.md). Read each time a socket's idle timer is armed.
   */
  responsesSocketIdleMs: z.number().int().min(1000).max(86_400_000).default(600_000),
  /** Context compression: fit requests that would overflow the target model's context (docs/compression.md). */
  compression: compressionSettingsSchema.prefault({}),
  /** Outbound proxy for upstream, OAuth token and webhook calls (docs/operations.md "Outbound proxy"). */
  outboundProxy: outboundProxySettingsSchema.prefault({}),
  /** Sync with another router or an HTTPS endpoint (docs/operations.md "Sync between machines"). */
  cloudSync: cloudSyncSettingsSchema.prefault({}),
  /** MCP server limits and the models of the A2A agent and the assistant (docs/agents.md). */
  agents: agentSettingsSchema.prefault({}),
  /** OAuth endpoint overrides per provider: `{<provider>: {authorizeUrl?, tokenUrl?, deviceAuthorizationUrl?, apiBaseUrl?}}` (docs/accounts.md). */
  oauthEndpoints: oauthEndpointsSchema,
});

export type Settings = z.infer<typeof settingsSchema>;
type SettingsShape = typeof settingsSchema.shape;
/**
 * Every setting optional, without its default: zod 4's `.partial()` keeps defaults, so a PATCH naming one
 * setting would reset all the others. Unknown keys are rejected.
 */
export const settingsPatchSchema = z.strictObject(
  Object.fromEntries(Object.entries(settingsSchema.shape).map(([k, v]) => [k, v.unwrap().optional()])) as {
    [K in keyof SettingsShape]: z.ZodOptional<ReturnType<SettingsShape[K]['unwrap']>>;
  },
);
export type SettingsPatch = Partial<Settings>;

/** The telegramBotToken as replies show it: first 10 characters and `...` (the bot id part), or ''. */
export function maskTelegramToken(token: string): string {
  return token ? `${token.slice(0, 10)}...` : '';
}

/** Settings as replies show them: secrets masked. */
export function publicSettings(s: Settings): Settings {
  return {
    ...s,
    telegramBotToken: maskTelegramToken(s.telegramBotToken),
    cloudSync: { ...s.cloudSync, secret: s.cloudSync.secret ? SECRET_MASK : '' },
    outboundProxy: maskOutboundProxy(s.outboundProxy),
  };
}

type Listener = (next: Settings, changed: (keyof Settings)[]) => void;

/** Settings that hold credentials: stored encrypted (`{"enc": ...}`), never as plain text. */
const SECRET_SETTINGS: ReadonlySet<string> = new Set<keyof Settings>(['telegramBotToken']);
/** Object settings with one credential field, stored encrypted the same way. */
const NESTED_SECRETS: Readonly<Record<string, string>> = { cloudSync: 'secret' };
/** Object settings whose strings may carry credentials (a proxy URL's `user:password@`): the whole value stored encrypted. */
const OBJECT_SECRETS: ReadonlySet<string> = new Set<keyof Settings>(['outboundProxy']);

/**
 * Settings with one owner: read from memory, written through to the database, listeners told of changes.
 * With a key file (the daemon), secret settings are AES-256-GCM encrypted at rest like connection
 * credentials; a plain value written by an older version is encrypted in place at start.
 */
export class SettingsStore {
  private current: Settings;
  private readonly listeners: Listener[] = [];

  constructor(
    private readonly db: Db,
    private readonly keyFile?: string,
  ) {
    const rows = db.prepare('SELECT key, value FROM settings').all() as Array<{ key: string; value: string }>;
    const stored: Record<string, unknown> = {};
    const plainSecrets: string[] = [];
    for (const row of rows) {
      if (!(row.key in settingsSchema.shape)) continue;
      const value = JSON.parse(row.value) as unknown;
      if (OBJECT_SECRETS.has(row.key) && value && typeof value === 'object' && 'enc' in value) {
        const opened = this.open(row.key, value);
        if (typeof opened === 'string') stored[row.key] = JSON.parse(opened) as unknown;
      } else if (OBJECT_SECRETS.has(row.key)) {
        if (keyFile) plainSecrets.push(row.key);
        stored[row.key] = value;
      } else if (SECRET_SETTINGS.has(row.key)) {
        const opened = this.open(row.key, value);
        if (opened === undefined) continue;
        if (typeof value === 'string' && value !== '' && keyFile) plainSecrets.push(row.key);
        stored[row.key] = opened;
      } else if (NESTED_SECRETS[row.key] && value && typeof value === 'object') {
        const field = NESTED_SECRETS[row.key]!;
        const inner = (value as Record<string, unknown>)[field];
        stored[row.key] = { ...value, [field]: inner === undefined ? '' : (this.open(`${row.key}.${field}`, inner) ?? '') };
      } else stored[row.key] = value;
    }
    // A stored value that no longer validates (older bounds) falls back to its default rather than failing start.
    const parsed = settingsSchema.safeParse(stored);
    this.current = parsed.success ? parsed.data : settingsSchema.parse({});
    if (plainSecrets.length && parsed.success) this.write(this.current, plainSecrets as (keyof Settings)[]);
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
    if (OBJECT_SECRETS.has(key) && this.keyFile) return JSON.stringify({ enc: encryptSecret(JSON.stringify(value), this.keyFile, `setting:${key}`) });
    if (SECRET_SETTINGS.has(key) && this.keyFile && typeof value === 'string' && value !== '') {
      return JSON.stringify({ enc: encryptSecret(value, this.keyFile, `setting:${key}`) });
    }
    const field = NESTED_SECRETS[key];
    if (field && this.keyFile && value && typeof value === 'object') {
      const inner = (value as Record<string, unknown>)[field];
      if (typeof inner === 'string' && inner !== '') {
        return JSON.stringify({ ...value, [field]: { enc: encryptSecret(inner, this.keyFile, `setting:${key}.${field}`) } });
      }
    }
    return JSON.stringify(value);
  }

  private write(next: Settings, keys: readonly (keyof Settings)[]): void {
    const upsert = this.db.prepare(
      'INSERT INTO settings (key, value, updated_at) VALUES (?, ?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at',
    );
    const now = new Date().toISOString();
    this.db.transaction(() => {
      for (const key of keys) upsert.run(key, this.stored(key, next[key]), now);
    })();
  }

  get(): Settings {
    return this.current;
  }

  /** Applies a validated patch atomically and notifies listeners. */
  update(patch: SettingsPatch): Settings {
    const changed = Object.keys(patch) as (keyof Settings)[];
    const next = { ...this.current, ...patch };
    this.write(next, changed);
    this.current = next;
    for (const fn of this.listeners) fn(next, changed);
    return next;
  }

  onChange(fn: Listener): void {
    this.listeners.push(fn);
  }
}
