/** The settings: their schema (types, bounds, defaults, groups, descriptions), patch schema and public view. */
import { z } from 'zod';
import { ACCOUNT_STRATEGIES } from '../../shared/records.js';
import { settingsSections, type FeatureSettings } from './registry.js';

const MiB = 1024 * 1024;

/** The Settings page's groups, in the order it shows them (`GET /api/settings/schema`). */
export const SETTING_GROUPS = {
  access: 'Access and security',
  routing: 'Routing and resilience',
  limits: 'Limits',
  usage: 'Usage records and backups',
  capture: 'Traffic capture',
  cache: 'Caches',
  observability: 'Observability',
  batches: 'Batches and files',
  notifications: 'Notifications',
  catalog: 'Model catalog',
  compression: 'Context compression',
  network: 'Network',
  sync: 'Sync between machines',
  agents: 'Agents and MCP',
  accounts: 'Subscription accounts',
} as const;

/** What the Settings page and `GET /api/settings/schema` tell about a setting (zod metadata of its field). */
export interface SettingMeta {
  group: keyof typeof SETTING_GROUPS;
  /** One or two sentences for the person changing it. */
  description: string;
  /** Replies mask it; the page shows it as a password field. */
  secret?: boolean;
  /** What a number counts: ms, seconds, bytes, days, ... */
  unit?: string;
}
/** The metadata of a setting's schema (`.meta(about({...}))`); features use it for their sections too. */
export const about = (m: SettingMeta) => ({ ...m });

/**
 * The settings of the daemon's core, their type, bounds, default, group and description. Features add
 * theirs as sections (registry.ts); {@link settingsSchema} is both.
 */
export const coreSettingsSchema = z.object({
  /** CONTRACT: false lets loopback callers use management routes without a credential. */
  requireLogin: z
    .boolean()
    .default(true)
    .meta(about({ group: 'access', description: 'Ask for the dashboard password or a credential on management routes. Off: callers on this machine (loopback) need none.' })),
  allowedOrigins: z
    .array(z.string().url().max(200))
    .max(50)
    .default([])
    .meta(about({ group: 'access', description: 'Browser origins trusted besides router\'s own loopback ones (state-changing requests, the live WebSocket, their hosts as Host names). One per line, e.g. https://router.example.com.' })),
  allowPrivateWebhookDestinations: z
    .boolean()
    .default(false)
    .meta(about({ group: 'access', description: 'Let webhooks call receivers on this machine or a private network (the public-destination check is skipped; logged at start while on).' })),
  /** Spec, Authentication: /api/copilot/* is loopback-only unless a manage-scope key opts in. */
  copilotAllowManageKey: z
    .boolean()
    .default(false)
    .meta(about({ group: 'access', description: 'Let manage-scope API keys reach the assistant routes (/api/copilot/*) from other machines.' })),
  /** Deprecated, logged when used, to be removed (spec, Versioning 5). */
  keychainLegacyImport: z
    .boolean()
    .default(false)
    .meta(about({ group: 'access', description: 'Deprecated: a keychain import without confirmed accounts imports everything it discovers.' })),
  metricsOpenOnLoopback: z
    .boolean()
    .default(false)
    .meta(about({ group: 'access', description: 'Let callers on this machine read /metrics without a credential (a local Prometheus).' })),
  catalogUrl: z
    .string()
    .url()
    .max(500)
    .regex(/^https?:\/\//, 'expected an http:// or https:// URL')
    .default('https://models.dev/api.json')
    .meta(about({ group: 'catalog', description: 'Where `router catalog update` fetches the model catalog: a models.dev api.json document (docs/catalog.md).' })),
  accountStrategy: z
    .enum(ACCOUNT_STRATEGIES)
    .default('fill-first')
    .meta(
      about({
        group: 'routing',
        description: `How the accounts of one provider are chosen (${ACCOUNT_STRATEGIES.join(', ')}): fill-first takes them by priority, headroom the account with the most of its rate-limit quota left, as its replies report it.`,
      }),
    ),
  breakerFailureThreshold: z
    .number()
    .int()
    .min(1)
    .max(1000)
    .default(5)
    .meta(about({ group: 'routing', description: "Failures in a row (network, timeout, 5xx) that open a provider's circuit." })),
  breakerCooldownMs: z
    .number()
    .int()
    .min(100)
    .max(3_600_000)
    .default(30_000)
    .meta(about({ group: 'routing', unit: 'ms', description: 'How long an open circuit stays open before one trial request.' })),
  requestDeadlineMs: z
    .number()
    .int()
    .min(1000)
    .max(3_600_000)
    .default(600_000)
    .meta(about({ group: 'routing', unit: 'ms', description: 'Deadline of one client request across all failover attempts.' })),
  /** A combo's targetTimeoutMs, when shorter, wins; an upstream silent for longer is treated as hung (504, failover). */
  upstreamFirstByteTimeoutMs: z
    .number()
    .int()
    .min(1000)
    .max(3_600_000)
    .default(300_000)
    .meta(about({ group: 'routing', unit: 'ms', description: "Longest wait for an upstream's first byte (reply headers, or a stream's first content). Reasoning models may think for minutes first." })),
  /** Read only for combos with midStreamRecovery (docs/combos.md, "Recovery mid-stream"). */
  streamStallTimeoutMs: z
    .number()
    .int()
    .min(1000)
    .max(3_600_000)
    .default(60_000)
    .meta(about({ group: 'routing', unit: 'ms', description: "Under a combo's midStreamRecovery: a stream that started and then sends nothing for this long is stalled (ended with an error event, or continued on the next target)." })),
  /** docs/responses-websocket.md, "Upstream WebSocket". */
  responsesUpstreamWebSocket: z
    .enum(['auto', 'always', 'never'])
    .default('auto')
    .meta(about({ group: 'routing', description: "The Responses WebSocket towards providers that speak it (codex): auto for clients that came over router's own socket, always, or never." })),
  /** Read each time a socket's idle timer is armed (docs/responses-websocket.md). */
  responsesSocketIdleMs: z
    .number()
    .int()
    .min(1000)
    .max(86_400_000)
    .default(600_000)
    .meta(about({ group: 'routing', unit: 'ms', description: 'A Responses WebSocket with no response in progress and no frame either way for this long is closed.' })),
  maxRequestBodyBytes: z
    .number()
    .int()
    .min(1024)
    .max(256 * MiB)
    .default(32 * MiB)
    .meta(about({ group: 'limits', unit: 'bytes', description: 'Largest request body of the model routes (/v1/...).' })),
  /** docs/security.md, "Bounds on uploads and upstream reads". */
  maxUpstreamEventBytes: z
    .number()
    .int()
    .min(64 * 1024)
    .max(64 * MiB)
    .default(16 * MiB)
    .meta(about({ group: 'limits', unit: 'bytes', description: "Most bytes of one line or event of an upstream stream (and of what it may send before its first content); past it the request ends with the client format's error. 16 MiB holds a streamed base64 image." })),
  maxManagementBodyBytes: z
    .number()
    .int()
    .min(1024)
    .max(64 * MiB)
    .default(1 * MiB)
    .meta(about({ group: 'limits', unit: 'bytes', description: 'Largest request body of every other route.' })),
  defaultDailyRequestLimit: z
    .number()
    .int()
    .min(0)
    .max(100_000_000)
    .default(0)
    .meta(about({ group: 'limits', description: 'Requests per UTC day of an API key without its own limit; 0 = unlimited.' })),
  relayRequestsPerMinutePerKey: z
    .number()
    .int()
    .min(0)
    .max(1_000_000)
    .default(60)
    .meta(about({ group: 'limits', description: 'Relay route: requests per minute per API key; 0 = no limit.' })),
  relayRequestsPerMinutePerIp: z
    .number()
    .int()
    .min(0)
    .max(1_000_000)
    .default(120)
    .meta(about({ group: 'limits', description: 'Relay route: requests per minute per client IP; 0 = no limit.' })),
  usageRetentionDays: z
    .number()
    .int()
    .min(1)
    .max(3650)
    .default(30)
    .meta(about({ group: 'usage', unit: 'days', description: 'How long usage rows (request log, analytics) are kept; older ones are pruned at start and daily.' })),
  /**
   * 'batched': rows committed within about 100 ms of a request's end (a crash loses at most the last ~200
   * ms of rows). 'reply': a reply ends only once its row is committed and fsynced (docs/usage.md).
   */
  usageDurability: z
    .enum(['batched', 'reply'])
    .default('batched')
    .meta(about({ group: 'usage', description: 'batched: usage rows are written within about 100 ms (a crash loses at most the last moments). reply: a reply ends only once its row is on disk (slower).' })),
  dailyBackups: z
    .boolean()
    .default(true)
    .meta(about({ group: 'usage', description: 'Back the database up every day (state folder backups/).' })),
  backupRetention: z
    .number()
    .int()
    .min(1)
    .max(1000)
    .default(10)
    .meta(about({ group: 'usage', description: 'Automatic backups kept (daily, before a migration, before an import); manual ones stay.' })),
  captureTraffic: z
    .boolean()
    .default(false)
    .meta(about({ group: 'capture', description: 'Keep the last 200 proxied requests with headers and bodies (secrets masked) for the request inspector.' })),
  captureMaxBodyBytes: z
    .number()
    .int()
    .min(1024)
    .max(16 * MiB)
    .default(1 * MiB)
    .meta(about({ group: 'capture', unit: 'bytes', description: 'Bytes kept of each captured body; longer ones are cut and marked truncated.' })),
  translatorHistorySize: z
    .number()
    .int()
    .min(0)
    .max(200)
    .default(100)
    .meta(about({ group: 'capture', description: 'Translations kept for the request detail while traffic capture is on (0: none).' })),
  cacheEnabled: z
    .boolean()
    .default(true)
    .meta(about({ group: 'cache', description: 'Response cache on or off for every key (requests and keys still opt in; docs/cache.md).' })),
  cacheTtlSeconds: z
    .number()
    .int()
    .min(1)
    .max(30 * 86_400)
    .default(3600)
    .meta(about({ group: 'cache', unit: 'seconds', description: 'How long a cached reply is served after it was stored.' })),
  cacheMaxEntries: z
    .number()
    .int()
    .min(1)
    .max(1_000_000)
    .default(10_000)
    .meta(about({ group: 'cache', description: 'Cached replies held at most; the least recently used go first.' })),
  cacheMaxBytes: z
    .number()
    .int()
    .min(1024)
    .max(4096 * MiB)
    .default(64 * MiB)
    .meta(about({ group: 'cache', unit: 'bytes', description: 'Bytes of cached replies held at most (memory and database).' })),
  reasoningCacheEnabled: z
    .boolean()
    .default(true)
    .meta(about({ group: 'cache', description: 'Keep the thinking of tool-call turns and put it back when a client drops it (docs/operations.md).' })),
  reasoningCacheMaxEntries: z
    .number()
    .int()
    .min(1)
    .max(1_000_000)
    .default(5000)
    .meta(about({ group: 'cache', description: 'Reasoning-cache entries held at most (one per assistant turn with tool calls).' })),
  reasoningCacheMaxBytes: z
    .number()
    .int()
    .min(1024)
    .max(1024 * MiB)
    .default(32 * MiB)
    .meta(about({ group: 'cache', unit: 'bytes', description: 'Bytes of cached reasoning held at most.' })),
  reasoningCacheTtlSeconds: z
    .number()
    .int()
    .min(1)
    .max(30 * 86_400)
    .default(86_400)
    .meta(about({ group: 'cache', unit: 'seconds', description: 'How long a cached reasoning entry is kept after its reply.' })),
  /** '' = off unless OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT is set. Read at start. */
  otelEndpoint: z
    .union([z.literal(''), z.string().url().max(500)])
    .default('')
    .meta(about({ group: 'observability', description: 'OTLP/HTTP traces URL, e.g. http://127.0.0.1:4318/v1/traces; empty = off unless the OTEL_EXPORTER_OTLP_* environment names one. Read at start.' })),
  /** '' takes OTEL_EXPORTER_OTLP_TRACES_PROTOCOL / OTEL_EXPORTER_OTLP_PROTOCOL, else http/protobuf. */
  otelProtocol: z
    .enum(['', 'http/protobuf', 'http/json'])
    .default('')
    .meta(about({ group: 'observability', description: 'Encoding of exported traces; empty = from the environment, else http/protobuf. Read at start.' })),
  otelCaptureContent: z
    .boolean()
    .default(false)
    .meta(about({ group: 'observability', description: 'Export prompt content on request spans (credentials masked).' })),
  otelPropagateTraceparent: z
    .boolean()
    .default(false)
    .meta(about({ group: 'observability', description: "Send a W3C traceparent (router's request span) to upstream providers." })),
  batchConcurrency: z
    .number()
    .int()
    .min(1)
    .max(256)
    .default(8)
    .meta(about({ group: 'batches', description: 'Batch requests run by router in flight at once, across every batch (docs/batch.md).' })),
  batchFileMaxBytes: z
    .number()
    .int()
    .min(1024)
    .max(2048 * MiB)
    .default(200 * 1000 * 1000)
    .meta(about({ group: 'batches', unit: 'bytes', description: 'Largest file POST /v1/files takes (OpenAI\'s 200 MB by default).' })),
  filesMaxStoredBytesPerKey: z
    .number()
    .int()
    .min(1024)
    .max(1024 * 1024 * MiB)
    .default(10 * 1024 * MiB)
    .meta(about({ group: 'batches', unit: 'bytes', description: 'Bytes of uploaded /v1/files one API key may store at once (the dashboard and CLI share one pool); past it an upload is a 413. Expired files (expires_after, 30 days by default) stop counting.' })),
  batchPollIntervalMs: z
    .number()
    .int()
    .min(100)
    .max(3_600_000)
    .default(30_000)
    .meta(about({ group: 'batches', unit: 'ms', description: 'How often a batch run by its provider is polled.' })),
  /**
   * `<bot id>:<secret>`, '' when unset. Replies mask it (see `publicSettings`); the masked form is accepted
   * here only so that a PATCH echoing a GET reply validates, and the route then keeps the stored token.
   */
  telegramBotToken: z
    .string()
    .max(200)
    .regex(/^(\d+:[A-Za-z0-9_-]+|\S{0,10}\.\.\.)?$/, 'expected <bot id>:<token>')
    .default('')
    .meta(about({ group: 'notifications', secret: true, description: 'Telegram bot token (<bot id>:<token>) used by webhooks of kind telegram.' })),
});

type Flat<T> = { [K in keyof T]: T[K] };
/** Every setting: the core's and each feature's section (FeatureSettings, widened by the features). */
export type Settings = Flat<z.infer<typeof coreSettingsSchema> & FeatureSettings>;
export type SettingsPatch = Partial<Settings>;

type CoreShape = typeof coreSettingsSchema.shape;
/**
 * Every setting optional, without its default: zod 4's `.partial()` keeps defaults, so a PATCH naming one
 * setting would reset all the others. Unknown keys are rejected.
 */
function patchOf<S extends Record<string, z.ZodType>>(shape: S) {
  return z.strictObject(
    Object.fromEntries(Object.entries(shape).map(([k, v]) => [k, z.optional((v as unknown as z.ZodDefault).unwrap())])) as {
      [K in keyof S]: z.ZodOptional<S[K] extends { unwrap(): infer T extends z.ZodType } ? T : S[K]>;
    },
  );
}
/** The core settings' PATCH schema (the cache route's short names borrow their bounds). */
export const corePatchSchema = patchOf(coreSettingsSchema.shape as CoreShape);

let full: { schema: z.ZodObject; patch: z.ZodObject } | undefined;
function composed() {
  if (!full) {
    const schema = coreSettingsSchema.extend(Object.fromEntries(settingsSections().map((s) => [s.key, s.schema])));
    full = { schema, patch: patchOf(schema.shape) };
  }
  return full;
}

/**
 * Every setting (the core's and the features' sections), its type, bounds, default, group and description.
 * Composed on first read, after src/daemon/settings-sections.ts registered the sections.
 */
export function settingsSchema(): z.ZodObject {
  return composed().schema;
}

/** PATCH /api/settings validates against this, unknown keys rejected. */
export function settingsPatchSchema(): z.ZodObject {
  return composed().patch;
}

/** The telegramBotToken as replies show it: first 10 characters and `...` (the bot id part), or ''. */
export function maskTelegramToken(token: string): string {
  return token ? `${token.slice(0, 10)}...` : '';
}

/** Settings as replies show them: secrets masked (the core's token, and what each section masks). */
export function publicSettings(s: Settings): Settings {
  const out: Record<string, unknown> = { ...s, telegramBotToken: maskTelegramToken(s.telegramBotToken) };
  for (const section of settingsSections()) if (section.mask) out[section.key] = section.mask(out[section.key]);
  return out as Settings;
}

/** A PATCH as stored: values echoing a masked reply keep the stored credentials (sections' unmask). */
export function unmaskPatch(patch: SettingsPatch, stored: Settings): SettingsPatch {
  const out: Record<string, unknown> = { ...patch };
  for (const section of settingsSections()) {
    if (section.unmask && out[section.key] !== undefined) out[section.key] = section.unmask(out[section.key], (stored as Record<string, unknown>)[section.key]);
  }
  return out as SettingsPatch;
}
