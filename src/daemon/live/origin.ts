import { allowedOrigins, isLoopbackHost, normalizeOrigin } from '../http/request-guard.js';

export { allowedOrigins, isLoopbackHost, normalizeOrigin };

export type OriginVerdict = { ok: true } | { ok: false; message: string };

/**
 * The live WebSocket's Origin rule (spec, Authentication: live WebSocket upgrades check Origin against loopback dashboard origins): a browser's Origin must be a loopback
 * dashboard origin of this listener or one of the `allowedOrigins` setting; a client that sends no Origin
 * (not a browser) is accepted only while the listener is bound to loopback.
 */
export function checkLiveOrigin(origin: string | null, listen: { host: string; port: number }, configured: readonly string[]): OriginVerdict {
  if (origin === null || origin === '') {
    return isLoopbackHost(listen.host)
      ? { ok: true }
      : { ok: false, message: 'An Origin header is required: the router listens on a non-loopback address.' };
  }
  const n = normalizeOrigin(origin);
  if (n && allowedOrigins(listen.port, configured).has(n)) return { ok: true };
  return { ok: false, message: 'This Origin may not open the live channel; add it to the allowedOrigins setting.' };
}
