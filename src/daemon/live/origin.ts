import { isLoopbackAddress } from '../auth/pipeline.js';

/** True when the listener's host is a loopback address or name (127.0.0.0/8, ::1, localhost). */
export function isLoopbackHost(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, '').toLowerCase();
  return h === 'localhost' || isLoopbackAddress(h);
}

/** The normalized origin (`scheme://host[:port]`) of a URL-like string, or undefined when it is not one. */
export function normalizeOrigin(value: string): string | undefined {
  try {
    const u = new URL(value);
    if (u.protocol !== 'http:' && u.protocol !== 'https:') return undefined;
    return u.origin;
  } catch {
    return undefined;
  }
}

/** Origins a browser may open the live channel from: loopback dashboard origins on this port plus the setting. */
export function allowedOrigins(port: number, configured: readonly string[]): Set<string> {
  const out = new Set([`http://127.0.0.1:${port}`, `http://localhost:${port}`, `http://[::1]:${port}`]);
  for (const o of configured) {
    const n = normalizeOrigin(o);
    if (n) out.add(n);
  }
  return out;
}

export type OriginVerdict = { ok: true } | { ok: false; message: string };

/**
 * The live WebSocket's Origin rule (spec Authentication 7): a browser's Origin must be a loopback
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
