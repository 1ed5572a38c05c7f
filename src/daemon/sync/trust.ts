/**
 * What a sync peer may change here (docs/security.md "Sync trust model"). A peer holding the shared secret
 * is trusted with data (combos, limits, names, cache and routing tuning); it is not trusted, unless this
 * router opts in, with what decides who may get in or where credentials and prompts go.
 */

/** Settings that never travel: the sync's own, and the machine's network set-up. */
export const LOCAL_SETTINGS: ReadonlySet<string> = new Set(['cloudSync', 'outboundProxy', 'allowedOrigins']);

/** Settings that are credentials: sealed on the wire, applied only with `cloudSync.overwriteCredentials`. */
export const CREDENTIAL_SETTINGS: ReadonlySet<string> = new Set(['telegramBotToken']);

/**
 * Security settings: applied only with `cloudSync.applySecurityChanges`. Each with what it decides (the
 * list docs/security.md shows).
 */
export const SECURITY_SETTINGS: Readonly<Record<string, string>> = {
  requireLogin: 'who may use the management routes',
  metricsOpenOnLoopback: 'who may read /metrics',
  copilotAllowManageKey: 'who may reach /api/copilot/*',
  keychainLegacyImport: 'what a keychain import takes without confirmation',
  allowPrivateWebhookDestinations: 'where webhooks may send events',
  telegramBotToken: 'which Telegram bot receives events',
  oauthEndpoints: 'where OAuth logins and token refreshes send credentials',
  otelEndpoint: 'where traces are exported',
  otelProtocol: 'how traces are exported',
  otelCaptureContent: 'whether prompts are exported with traces',
  otelPropagateTraceparent: 'what is sent to providers with each request',
  captureTraffic: 'whether prompts and headers are kept for the inspector',
};

/**
 * Keys of a connection's providerSpecificData that say where its requests or credentials go (its base URL,
 * token URL, proxy, host); any other string value that is a URL counts too.
 */
const ENDPOINT_DATA_KEYS: ReadonlySet<string> = new Set(['baseUrl', 'apiBaseUrl', 'tokenUrl', 'resourceUrl', 'proxy', 'githubHost']);
const URL_LIKE = /^[a-z][a-z0-9+.-]*:\/\//i;

/** The endpoint part of a connection's providerSpecificData (compared, never applied, without the opt-in). */
export function endpointData(data: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(data).sort()) {
    const v = data[key];
    if (ENDPOINT_DATA_KEYS.has(key) || (typeof v === 'string' && URL_LIKE.test(v.trim()))) out[key] = v;
  }
  return out;
}

/** Reason text of a change held back for want of `cloudSync.applySecurityChanges`. */
export const needsTrust = (what: string) => `${what}: applied only with cloudSync.applySecurityChanges`;
