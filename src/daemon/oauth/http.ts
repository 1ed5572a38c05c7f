import { networkFailureText } from '../net/probe.js';
import { sendUpstream } from '../net/upstream.js';
import type { ProviderDef } from '../providers/types.js';

/** A reply of an authorization server or setup API: status, the parsed JSON body (or undefined), the text. */
export interface OAuthReply {
  status: number;
  json: Record<string, unknown> | undefined;
  text: string;
}

/**
 * One call to an OAuth or setup endpoint, through the outbound proxy the provider or connection uses. A
 * form or JSON body; 20 s deadline; 1 MiB of reply read at most. Network failures reject.
 */
export async function oauthCall(opts: {
  url: string;
  def: ProviderDef;
  proxy?: string | null;
  method?: 'GET' | 'POST';
  form?: Record<string, string>;
  json?: unknown;
  headers?: Record<string, string>;
}): Promise<OAuthReply> {
  const headers: Record<string, string> = { accept: 'application/json', ...opts.headers };
  let body: string | undefined;
  if (opts.form) {
    headers['content-type'] = 'application/x-www-form-urlencoded';
    body = new URLSearchParams(opts.form).toString();
  } else if (opts.json !== undefined) {
    headers['content-type'] = 'application/json';
    body = JSON.stringify(opts.json);
  }
  // Network failures reject with words naming the host (callers put them in replies), not raw exception text.
  const unreachable = (err: unknown): never => {
    throw new Error(networkFailureText(err, opts.url));
  };
  const reply = await sendUpstream({
    url: opts.url,
    method: opts.method ?? 'POST',
    headers,
    body,
    signal: AbortSignal.timeout(20_000),
    route: { provider: opts.def, proxy: opts.proxy },
  }).catch(unreachable);
  const text = await reply.text(1024 * 1024).catch(unreachable);
  let json: Record<string, unknown> | undefined;
  try {
    const parsed = JSON.parse(text) as unknown;
    if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) json = parsed as Record<string, unknown>;
  } catch {
    json = undefined;
  }
  return { status: reply.statusCode, json, text };
}

/** Sends token-endpoint fields as a form or as JSON, as the provider expects. */
export function tokenCall(def: ProviderDef, url: string, fields: Record<string, string>, encoding: 'json' | 'form', proxy?: string | null): Promise<OAuthReply> {
  return encoding === 'form' ? oauthCall({ url, def, proxy, form: fields }) : oauthCall({ url, def, proxy, json: fields });
}

/** The claims of a JWT (id_token, some access tokens), unverified: only for reading ids it carries. */
export function jwtClaims(token: string | undefined): Record<string, unknown> | undefined {
  const part = token?.split('.')[1];
  if (!part) return undefined;
  try {
    const claims = JSON.parse(Buffer.from(part, 'base64url').toString('utf8')) as unknown;
    return claims && typeof claims === 'object' ? (claims as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}
