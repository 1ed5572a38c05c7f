import { createRequire } from 'node:module';
import type { Agent, Dispatcher, ProxyAgent } from 'undici';
import AgentClass from 'undici/lib/dispatcher/agent.js';
import { isLoopbackHost, noProxyMatcher, type NoProxyMatcher } from './no-proxy.js';
import { socksConnector } from './socks.js';

const require = createRequire(import.meta.url);

/**
 * Outbound proxy: which dispatcher an upstream call, an OAuth token call or a webhook delivery goes
 * through. Precedence, first that applies:
 *   1. the connection's `providerSpecificData.proxy` (a proxy URL, or null / "direct" for none);
 *   2. the setting `outboundProxy.perProvider[<provider id>]` (a URL, or null for none);
 *   3. the setting `outboundProxy.url`;
 *   4. the environment: `HTTPS_PROXY` / `HTTP_PROXY` (by the destination's scheme), then `ALL_PROXY`.
 * Exclusions: with 1-3 the setting `outboundProxy.noProxy`; with 4 the environment's `NO_PROXY`, and
 * loopback destinations always (a proxy elsewhere cannot reach this machine's loopback).
 *
 * Dispatchers are built once per distinct proxy URL and kept; the choice for an (origin, provider,
 * connection proxy) is cached too, so the hot path is one Map lookup. Both caches are reset when the
 * settings change.
 */

/** The setting `outboundProxy` (CONTRACT). */
export interface OutboundProxySettings {
  url: string;
  noProxy: string[];
  perProvider: Record<string, string | null>;
}

/** What an upstream call knows of where it goes: a target (its provider and connection's proxy). */
export interface OutboundRoute {
  provider: { id: string };
  /** The connection's own proxy: a URL, null or "direct" for none, undefined to inherit. */
  proxy?: string | null;
}

/** Proxy URL schemes accepted. */
export const PROXY_SCHEMES = ['http:', 'https:', 'socks5:', 'socks5h:', 'socks:'] as const;

/** Why a proxy URL is unusable, or null. */
export function proxyUrlProblem(raw: string): string | null {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return 'not a valid URL';
  }
  if (!(PROXY_SCHEMES as readonly string[]).includes(url.protocol)) return `scheme ${url.protocol} is not a proxy scheme (use http, https or socks5)`;
  if (!url.hostname) return 'no host';
  return null;
}

/** The proxy URL without credentials, for messages and replies. */
export function redactProxyUrl(raw: string): string {
  try {
    const url = new URL(raw);
    if (url.password) url.password = '***';
    return url.toString().replace(/\/$/, '');
  } catch {
    return '(invalid proxy URL)';
  }
}

/** Pool options of proxied agents: as the direct upstream agent's (long replies, no per-origin cap). */
const POOL: Agent.Options = {
  keepAliveTimeout: 30_000,
  keepAliveMaxTimeout: 600_000,
  connections: null,
  headersTimeout: 600_000,
  bodyTimeout: 600_000,
};
const CONNECT_TIMEOUT_MS = 10_000;

interface Resolved {
  settings: OutboundProxySettings;
  settingsNoProxy: NoProxyMatcher;
  env: { https?: string; http?: string; all?: string; noProxy: NoProxyMatcher };
}

let state: Resolved = resolve({ url: '', noProxy: [], perProvider: {} }, {});
const dispatchers = new Map<string, Dispatcher>();
/** (origin, provider, connection proxy) -> the dispatcher, or null for direct. */
const choices = new Map<string, Dispatcher | null>();
const CHOICES_MAX = 2_000;

function envValue(env: NodeJS.ProcessEnv, name: string): string | undefined {
  const v = env[name] ?? env[name.toLowerCase()];
  return v && v.trim() ? v.trim() : undefined;
}

function resolve(settings: OutboundProxySettings, env: NodeJS.ProcessEnv): Resolved {
  const noProxyEnv = envValue(env, 'NO_PROXY');
  return {
    settings,
    settingsNoProxy: noProxyMatcher(settings.noProxy),
    env: {
      https: envValue(env, 'HTTPS_PROXY'),
      http: envValue(env, 'HTTP_PROXY'),
      all: envValue(env, 'ALL_PROXY'),
      noProxy: noProxyMatcher(noProxyEnv ? [noProxyEnv] : []),
    },
  };
}

/** Applies the settings (at start and on every change) and the environment; drops cached choices. */
export function configureOutboundProxy(settings: OutboundProxySettings, env: NodeJS.ProcessEnv = process.env): void {
  state = resolve(settings, env);
  choices.clear();
}

/** Which proxy URL a call to `origin` uses, or undefined for a direct connection (see the module comment). */
export function proxyFor(origin: URL, route?: OutboundRoute): string | undefined {
  const port = Number(origin.port) || (origin.protocol === 'https:' ? 443 : 80);
  const { settings } = state;
  let chosen: string | null | undefined;
  if (route && route.proxy !== undefined) chosen = route.proxy === 'direct' ? null : route.proxy;
  else if (route && Object.hasOwn(settings.perProvider, route.provider.id)) chosen = settings.perProvider[route.provider.id];
  else if (settings.url) chosen = settings.url;
  if (chosen !== undefined) {
    if (chosen === null || chosen === '') return undefined;
    return state.settingsNoProxy(origin.hostname, port) ? undefined : chosen;
  }
  const fromEnv = (origin.protocol === 'https:' ? state.env.https : state.env.http) ?? state.env.all;
  if (!fromEnv || isLoopbackHost(origin.hostname) || state.env.noProxy(origin.hostname, port)) return undefined;
  return fromEnv;
}

/** The dispatcher of one proxy URL, built on first use and kept. Throws on an unusable URL. */
export function proxyDispatcher(proxyUrl: string): Dispatcher {
  let d = dispatchers.get(proxyUrl);
  if (d) return d;
  const problem = proxyUrlProblem(proxyUrl);
  if (problem) throw new Error(`proxy ${redactProxyUrl(proxyUrl)}: ${problem}`);
  const url = new URL(proxyUrl);
  if (url.protocol.startsWith('socks')) {
    d = new AgentClass({ ...POOL, connect: socksConnector(url, CONNECT_TIMEOUT_MS) });
  } else {
    // The whole package, on first use: ProxyAgent tunnels with Dispatcher.connect, which only the
    // package's entry installs (the direct path keeps loading the Agent module alone).
    const ProxyAgentClass = (require('undici') as { ProxyAgent: typeof ProxyAgent }).ProxyAgent;
    d = new ProxyAgentClass({ ...POOL, uri: proxyUrl, proxyTls: { timeout: CONNECT_TIMEOUT_MS } });
  }
  dispatchers.set(proxyUrl, d);
  return d;
}

/**
 * The dispatcher for a call to `origin` (scheme://host[:port]) on `route`, or undefined to go direct
 * with the caller's own agent. One Map lookup once the choice is cached.
 */
export function outboundDispatcher(origin: string, route?: OutboundRoute): Dispatcher | undefined {
  const key = route ? `${origin}\u0000${route.provider.id}\u0000${route.proxy === undefined ? '\u0001' : String(route.proxy)}` : origin;
  let d = choices.get(key);
  if (d === undefined) {
    const proxy = proxyFor(new URL(origin), route);
    try {
      d = proxy ? proxyDispatcher(proxy) : null;
    } catch {
      // An unusable connection-level URL (settings are validated): fail closed rather than leak direct.
      d = proxy ? failingDispatcher(proxy) : null;
    }
    if (choices.size >= CHOICES_MAX) choices.clear();
    choices.set(key, d);
  }
  return d ?? undefined;
}

/** A dispatcher that fails every request with the reason its proxy URL is unusable. */
function failingDispatcher(proxyUrl: string): Dispatcher {
  const err = new Error(`proxy ${redactProxyUrl(proxyUrl)}: ${proxyUrlProblem(proxyUrl) ?? 'unusable'}`);
  return {
    dispatch(_opts: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandler) {
      queueMicrotask(() => handler.onError?.(err));
      return true;
    },
  } as unknown as Dispatcher;
}

/** Closes every proxied pool (daemon shutdown). */
export async function closeOutboundProxies(): Promise<void> {
  const all = [...dispatchers.values()];
  dispatchers.clear();
  choices.clear();
  await Promise.allSettled(all.map((d) => d.close()));
}

/** A connection's own proxy from `providerSpecificData.proxy`: a URL, null ("direct" or null), or undefined (inherit). */
export function connectionProxy(c: { providerSpecificData: Record<string, unknown> }): string | null | undefined {
  const p = c.providerSpecificData.proxy;
  if (p === null || p === 'direct') return null;
  return typeof p === 'string' && p !== '' ? p : undefined;
}
