import { createRequire } from 'node:module';
import type { buildConnector } from 'undici';
import type { SocksClient as SocksClientType } from 'socks';

// Loaded on first use: a daemon without a SOCKS proxy never pays for the modules.
const require = createRequire(import.meta.url);

/** A failure between router and the proxy (not the destination's answer): carries a message in words. */
export class OutboundProxyError extends Error {
  override name = 'OutboundProxyError';
  readonly code = 'ROUTER_PROXY_FAILED';
}

/** Where a proxy listens, for messages (never its credentials). */
export function proxyAddress(proxy: URL): string {
  return `${proxy.protocol.replace(/:$/, '')}://${proxy.host}`;
}

/**
 * An undici connector that opens every connection through a SOCKS5 proxy (the `socks` library speaks
 * the protocol), then TLS on top for https origins via undici's own connector, so certificate checks,
 * SNI and session reuse are exactly those of a direct connection. The destination name is sent to the
 * proxy unresolved (socks5h behaviour): the proxy's DNS decides, as users of a SOCKS proxy expect.
 */
export function socksConnector(proxy: URL, timeoutMs: number): buildConnector.connector {
  const { SocksClient } = require('socks') as { SocksClient: typeof SocksClientType };
  const build = require('undici/lib/core/connect.js') as typeof buildConnector;
  const tlsConnect = build({ timeout: timeoutMs });
  const proxyInfo = {
    host: proxy.hostname.replace(/^\[|\]$/g, ''),
    port: Number(proxy.port) || 1080,
    type: 5 as const,
    ...(proxy.username ? { userId: decodeURIComponent(proxy.username), password: decodeURIComponent(proxy.password) } : {}),
  };
  return (options, callback) => {
    const port = Number(options.port) || (options.protocol === 'https:' ? 443 : 80);
    SocksClient.createConnection({
      command: 'connect',
      proxy: proxyInfo,
      destination: { host: options.hostname.replace(/^\[|\]$/g, ''), port },
      timeout: timeoutMs,
    }).then(
      ({ socket }) => {
        if (options.protocol !== 'https:') return callback(null, socket.setNoDelay(true));
        tlsConnect({ ...options, httpSocket: socket }, callback);
      },
      (err: Error) => callback(new OutboundProxyError(`SOCKS5 proxy ${proxyAddress(proxy)}: ${socksReason(err.message)}`), null),
    );
  };
}

/** The `socks` library's messages, in words a user can act on. */
function socksReason(message: string): string {
  if (/ECONNREFUSED/.test(message)) return 'the proxy refused the connection (is it running?)';
  if (/ENOTFOUND|EAI_AGAIN/.test(message)) return 'the proxy host name could not be resolved';
  if (/timed out/i.test(message)) return 'the proxy did not answer in time';
  if (/Authentication failed|no accepted authentication/i.test(message)) return 'the proxy refused the credentials';
  const rejected = /rejected connection - (\w+)/.exec(message);
  if (rejected) return `the proxy could not reach the destination (${rejected[1]})`;
  if (/Socket closed/.test(message)) return 'the proxy closed the connection';
  return message;
}
