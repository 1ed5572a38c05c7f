import { sendUpstream } from './upstream.js';
import { proxyDispatcher, proxyFor, redactProxyUrl } from './outbound-proxy.js';
import { OutboundProxyError } from './socks.js';

/** Reply of POST /api/settings/proxy/test (CONTRACT: `{ok, status?, latencyMs?, error?}`). */
export interface ProxyProbeResult {
  /** True when the target answered over HTTP (any status): it is reachable this way. */
  ok: boolean;
  status?: number;
  latencyMs?: number;
  /** What went wrong, in words (never a stack, never proxy credentials). */
  error?: string;
  /** The proxy used (credentials masked), or "direct". */
  via: string;
}

const PROBE_TIMEOUT_MS = 10_000;

/**
 * Sends one GET to `target` through `proxyUrl` (or, without it, the way router's own calls to that
 * origin would go: the configured proxy, its exclusions, the environment) and reports the outcome.
 */
export async function probeTarget(target: string, proxyUrl?: string): Promise<ProxyProbeResult> {
  const via = proxyUrl ?? proxyFor(new URL(target));
  const viaText = via ? redactProxyUrl(via) : 'direct';
  const t0 = performance.now();
  let timedOut = false;
  const signal = AbortSignal.timeout(PROBE_TIMEOUT_MS);
  signal.addEventListener('abort', () => (timedOut = true), { once: true });
  try {
    const reply = await sendUpstream({
      url: target,
      method: 'GET',
      headers: { accept: '*/*', 'user-agent': 'router-proxy-test' },
      signal,
      ...(proxyUrl ? { dispatcher: proxyDispatcher(proxyUrl) } : {}),
    });
    const latencyMs = Math.round(performance.now() - t0);
    reply.discard();
    return { ok: true, status: reply.statusCode, latencyMs, via: viaText };
  } catch (err) {
    const latencyMs = Math.round(performance.now() - t0);
    const error = timedOut ? `no answer within ${PROBE_TIMEOUT_MS / 1000} s` : describeFailure(err, target, via);
    return { ok: false, latencyMs, error, via: viaText };
  }
}

interface NetError {
  code?: string;
  message?: string;
  address?: string;
  port?: number;
  hostname?: string;
  cause?: NetError;
}

/** A network failure in words: whose fault (proxy or destination) and what happened. */
export function describeFailure(raw: unknown, target: string, via: string | undefined): string {
  if (raw instanceof OutboundProxyError) return raw.message;
  const err = (raw ?? {}) as NetError;
  const inner = err.cause ?? err;
  const code = inner.code ?? err.code ?? '';
  const message = err.message ?? '';
  const proxy = via ? new URL(via) : undefined;
  const proxyName = proxy ? `the proxy ${redactProxyUrl(via!)}` : '';
  const tunnel = /Proxy response \((\d+)\)/.exec(message);
  if (tunnel) {
    const status = Number(tunnel[1]);
    if (status === 407) return `${proxyName} requires credentials (HTTP 407): put user:password in the proxy URL`;
    return `${proxyName} refused to open a tunnel to ${new URL(target).host} (HTTP ${status})`;
  }
  if (/Proxy Authentication Required/.test(message)) return `${proxyName} requires credentials (HTTP 407)`;
  const atProxy = proxy !== undefined && inner.port !== undefined && String(inner.port) === (proxy.port || (proxy.protocol === 'https:' ? '443' : '80'));
  switch (code) {
    case 'ECONNREFUSED':
      return atProxy ? `${proxyName} refused the connection (is it running on that port?)` : `${new URL(target).host} refused the connection`;
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return `the host name ${inner.hostname ?? (atProxy ? proxy!.hostname : new URL(target).hostname)} could not be resolved`;
    case 'ECONNRESET':
    case 'UND_ERR_SOCKET':
      return atProxy ? `${proxyName} closed the connection` : 'the connection was closed before an answer came';
    case 'UND_ERR_CONNECT_TIMEOUT':
    case 'ETIMEDOUT':
      return atProxy ? `${proxyName} did not accept the connection in time` : 'the connection timed out';
    default:
      if (/^ERR_TLS|CERT|SSL/i.test(code)) return `TLS failed (${code})`;
      return code ? `network error (${code})` : 'network error';
  }
}

/**
 * A failed call to `url` in words that name what failed, for replies (issue 27: raw exception text such as
 * `connect ECONNREFUSED 127.0.0.1:1` or `getaddrinfo ENOTFOUND ...` never reaches a client): "127.0.0.1:1
 * refused the connection", "the host name x could not be resolved", "the call to x failed: the
 * connection timed out", "x did not answer in time".
 */
export function networkFailureText(err: unknown, url: string): string {
  let host = 'the upstream';
  let hostname = host;
  try {
    ({ host, hostname } = new URL(url));
  } catch {
    // not a URL: named generically
  }
  const e = (err ?? {}) as NetError & { name?: string };
  const code = e.cause?.code ?? e.code;
  if (e.name === 'TimeoutError' || code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT') return `${host} did not answer in time`;
  if (e.name === 'AbortError' || code === 'UND_ERR_ABORTED') return `the request to ${host} was cancelled`;
  if (code === 'ROUTER_REPLY_TOO_LARGE') return `the reply of ${host} is too large`;
  let text: string;
  try {
    text = describeFailure(err, url, undefined);
  } catch {
    text = code ? `network error (${code})` : 'network error';
  }
  return text.includes(hostname) ? text : `the call to ${host} failed: ${text}`;
}

