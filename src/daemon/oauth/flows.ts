import type { Server } from 'node:http';
import { badRequest, RouterError, publicReason } from '../http/errors.js';
import type { Connection } from '../providers/connections.js';
import { redactSecrets } from '../../shared/mask.js';
import type { OAuthConfig, ProviderDef } from '../providers/types.js';
import { extractUpstreamError, formatProviderError } from '../routing/provider-error.js';
import type { Services } from '../services.js';
import type { OAuthAuthorizeReply, OAuthDeviceCodeReply } from '../../shared/oauth.js';
import { expiryFrom, saveLogin } from './accounts.js';
import { closeListener, startCallbackListener, type CallbackResult } from './callback.js';
import { oauthEndpoints } from './endpoints.js';
import { oauthCall, tokenCall } from './http.js';
import { newPkce, newState } from './pkce.js';

/** A browser login's state and verifier live this long (a callback after it is refused). */
export const LOGIN_TTL_MS = 5 * 60_000;
/**
 * Loopback callback listeners open at once. A user logs in to one provider at a time; a retry on the same
 * port replaces its own earlier listener, so the cap only stops a caller binding port after port.
 */
export const MAX_CALLBACK_LISTENERS = 4;
/** Logins in progress at once (browser and device); each holds a verifier or device code for minutes. */
export const MAX_PENDING_LOGINS = 32;
const DEVICE_GRANT = 'urn:ietf:params:oauth:grant-type:device_code';

/** A login in progress, kept in memory only (the verifier never leaves the daemon). */
interface PendingLogin {
  provider: string;
  kind: 'browser' | 'device';
  verifier?: string;
  redirectUri?: string;
  expiresAt: number;
  status: 'pending' | 'complete' | 'error';
  connection?: Connection;
  error?: string;
  server?: Server;
  /** The loopback port its listener holds (set before the listener starts, cleared once it is done). */
  port?: number;
  deviceCode?: string;
  interval?: number;
  /** A device poll is in flight: a second one waits its turn (answers pending). */
  busy?: boolean;
}

export type PollOutcome =
  | { status: 'pending' | 'slow_down'; interval?: number }
  | { status: 'complete'; connection: Connection }
  | { status: 'expired' | 'denied' | 'error'; error: string };

/**
 * Logins in progress: browser (PKCE S256, optionally with a loopback callback listener) and device
 * flows (RFC 8628). Each login is keyed by its random `state`, single-use (taken out before its code is
 * exchanged) and forgotten after LOGIN_TTL_MS (device logins: when their device code expires); listeners
 * close after their one callback or at expiry.
 */
export class OAuthLogins {
  private readonly pending = new Map<string, PendingLogin>();
  private readonly sweeper: NodeJS.Timeout;

  constructor(private readonly services: () => Services) {
    this.sweeper = setInterval(() => this.sweep(), 15_000);
    this.sweeper.unref();
  }

  private sweep(): void {
    const now = Date.now();
    for (const [state, login] of this.pending) {
      if (login.expiresAt > now) continue;
      if (login.server) closeListener(login.server);
      this.pending.delete(state);
    }
  }

  /** Closes every listener (daemon shutdown). */
  close(): void {
    clearInterval(this.sweeper);
    for (const login of this.pending.values()) if (login.server) closeListener(login.server);
    this.pending.clear();
  }

  private config(def: ProviderDef, need: 'browser' | 'device'): OAuthConfig {
    const cfg = def.oauth;
    const ends = oauthEndpoints(def, this.services().settings.get());
    if (need === 'browser' && (!cfg?.authorizeUrl || !ends.authorizeUrl)) {
      throw badRequest(`Provider '${def.id}' has no browser login${cfg?.deviceAuthorizationUrl ? '; use device-code' : '; use import-token'}.`, 'provider');
    }
    if (need === 'device' && (!cfg?.deviceAuthorizationUrl || !ends.deviceAuthorizationUrl)) {
      throw badRequest(`Provider '${def.id}' has no device login${cfg?.authorizeUrl ? '; use authorize or start-callback-server' : '; use import-token'}.`, 'provider');
    }
    return cfg!;
  }

  private authUrl(def: ProviderDef, cfg: OAuthConfig, state: string, challenge: string, redirectUri: string): string {
    const url = new URL(oauthEndpoints(def, this.services().settings.get()).authorizeUrl!);
    const params: Record<string, string> = {
      ...cfg.authParams,
      response_type: 'code',
      client_id: cfg.clientId,
      redirect_uri: redirectUri,
      scope: cfg.authScope ?? '',
      code_challenge: challenge,
      code_challenge_method: 'S256',
      state,
    };
    for (const [k, v] of Object.entries(params)) url.searchParams.set(k, v);
    return url.toString();
  }

  /**
   * Starts a browser login whose code the user brings back to `exchange` (pasted, or from a redirect). The
   * reply is what the client needs to open the login page; the PKCE verifier stays in `pending`.
   */
  authorize(def: ProviderDef): OAuthAuthorizeReply {
    const cfg = this.config(def, 'browser');
    const redirectUri = cfg.pasteRedirectUri ?? loopbackUri(cfg, cfg.redirect!.port);
    const { authUrl, state } = this.begin(def, cfg, redirectUri);
    return { authUrl, state, redirectUri };
  }

  /** Refuses a new login past MAX_PENDING_LOGINS (expired ones are swept first). */
  private admit(): void {
    if (this.pending.size < MAX_PENDING_LOGINS) return;
    this.sweep();
    if (this.pending.size >= MAX_PENDING_LOGINS) {
      throw new RouterError(429, `${MAX_PENDING_LOGINS} logins are already in progress; finish or cancel one, or wait ${LOGIN_TTL_MS / 60_000} minutes.`, { code: 'too_many_logins' });
    }
  }

  /**
   * Makes room for a listener on `port`: an earlier login of this provider on the same port (a retry after
   * an abandoned attempt) is replaced; past MAX_CALLBACK_LISTENERS other listeners, a 429.
   */
  private listenerSlot(def: ProviderDef, port: number): void {
    let open = 0;
    for (const [state, login] of this.pending) {
      if (login.port === undefined) continue;
      if (login.port === port && login.provider === def.id) this.forget(state, login);
      else open++;
    }
    if (open >= MAX_CALLBACK_LISTENERS) {
      throw new RouterError(429, `${MAX_CALLBACK_LISTENERS} login listeners are already open; finish or cancel a login first (they close after ${LOGIN_TTL_MS / 60_000} minutes).`, {
        code: 'too_many_listeners',
      });
    }
  }

  private begin(def: ProviderDef, cfg: OAuthConfig, redirectUri: string, server?: Server): OAuthAuthorizeReply & { login: PendingLogin } {
    this.admit();
    const { verifier, challenge } = newPkce();
    const state = newState();
    const login: PendingLogin = { provider: def.id, kind: 'browser', verifier, redirectUri, expiresAt: Date.now() + LOGIN_TTL_MS, status: 'pending', server };
    this.pending.set(state, login);
    return { authUrl: this.authUrl(def, cfg, state, challenge, redirectUri), state, redirectUri, login };
  }

  /**
   * Starts a browser login with a loopback listener on the provider's registered redirect port (`port`
   * overrides it, for tests and for providers that accept any loopback port); the listener exchanges the
   * code itself and `pollCallback` reports the outcome.
   */
  async startCallbackServer(def: ProviderDef, port?: number): Promise<OAuthAuthorizeReply> {
    const cfg = this.config(def, 'browser');
    if (!cfg.redirect) throw badRequest(`Provider '${def.id}' has no loopback redirect; use authorize.`, 'provider');
    const listenPort = port ?? cfg.redirect.port;
    this.listenerSlot(def, listenPort);
    const started = this.begin(def, cfg, loopbackUri(cfg, listenPort));
    const { state, login } = started;
    login.port = listenPort;
    try {
      const server = await startCallbackListener({ port: listenPort, path: cfg.redirect.path, state, onResult: (r) => this.onCallback(def, state, r) });
      if (this.pending.get(state) !== login) {
        // Cancelled or replaced by a retry while the listener was starting.
        closeListener(server);
        throw new RouterError(409, 'This login was cancelled or replaced by a newer one while it started.', { code: 'login_replaced' });
      }
      login.server = server;
    } catch (err) {
      this.pending.delete(state);
      throw err;
    }
    return { authUrl: started.authUrl, state, redirectUri: started.redirectUri };
  }

  private async onCallback(def: ProviderDef, state: string, result: CallbackResult): Promise<{ ok: boolean; message: string }> {
    const login = this.pending.get(state);
    if (login?.status !== 'pending' || login.expiresAt <= Date.now()) return { ok: false, message: 'This login expired; start it again.' };
    login.server = undefined;
    login.port = undefined;
    if ('error' in result) {
      Object.assign(login, { status: 'error', error: result.error });
      return { ok: false, message: `The provider refused the login: ${result.error}.` };
    }
    try {
      const { connection } = await this.redeem(def, login, result.code, state);
      Object.assign(login, { status: 'complete', connection });
      return { ok: true, message: `${def.name} is connected to router.` };
    } catch (err) {
      const reason = publicReason(err);
      this.services().log.warn('oauth login failed', { provider: def.id, error: (err as Error).message });
      Object.assign(login, { status: 'error', error: reason });
      return { ok: false, message: `The ${def.name} login could not be completed: ${reason}.` };
    }
  }

  /** The outcome of a callback-server login; a finished one is forgotten once reported. */
  pollCallback(def: ProviderDef, state: string): PollOutcome {
    const login = this.pending.get(state);
    if (!login || login.provider !== def.id || login.kind !== 'browser') throw badRequest('Unknown or expired login state.', 'state');
    if (login.status === 'pending') {
      if (login.expiresAt > Date.now()) return { status: 'pending' };
      this.forget(state, login);
      return { status: 'expired', error: 'The login expired before the browser came back; start it again.' };
    }
    this.forget(state, login);
    return login.status === 'complete' ? { status: 'complete', connection: login.connection! } : { status: 'error', error: login.error ?? 'login failed' };
  }

  /**
   * Abandons a login in progress (the CLI gave up waiting, or the user stopped it): its state is forgotten
   * and its callback listener, if any, closed at once rather than at expiry, so the port is free again.
   * False when there is no such login (already finished, expired or never started).
   */
  cancel(def: ProviderDef, state: string): boolean {
    const login = this.pending.get(state);
    if (!login || login.provider !== def.id) return false;
    this.forget(state, login);
    return true;
  }

  private forget(state: string, login: PendingLogin): void {
    if (login.server) closeListener(login.server);
    this.pending.delete(state);
  }

  /** Exchanges a code the user brought back (single-use: the state is consumed whatever the outcome). */
  async exchange(def: ProviderDef, code: string, state: string | undefined): Promise<{ connection: Connection; created: boolean }> {
    // Claude's console page shows `code#state` for pasting.
    const hash = code.indexOf('#');
    if (hash > 0) {
      state ??= code.slice(hash + 1);
      code = code.slice(0, hash);
    }
    if (!state) throw badRequest('state is required (the one authorize returned).', 'state');
    const login = this.pending.get(state);
    if (!login || login.provider !== def.id || login.kind !== 'browser' || login.status !== 'pending') throw badRequest('Unknown, used or expired login state.', 'state');
    this.forget(state, login);
    if (login.expiresAt <= Date.now()) throw badRequest('This login expired; start it again.', 'state');
    return this.redeem(def, login, code, state);
  }

  /** The authorization-code grant with the login's PKCE verifier, then the provider's finishing steps. */
  private async redeem(def: ProviderDef, login: PendingLogin, code: string, state: string): Promise<{ connection: Connection; created: boolean }> {
    const cfg = def.oauth!;
    const fields: Record<string, string> = {
      grant_type: 'authorization_code',
      code,
      redirect_uri: login.redirectUri!,
      client_id: cfg.clientId,
      code_verifier: login.verifier!,
    };
    if (cfg.clientSecret) fields.client_secret = cfg.clientSecret;
    if (cfg.exchangeState) fields.state = state;
    const body = await this.tokenRequest(def, fields, cfg.exchangeBody ?? cfg.body, [code, login.verifier!]);
    return this.save(def, body);
  }

  private async tokenRequest(def: ProviderDef, fields: Record<string, string>, encoding: 'json' | 'form', secrets: string[]): Promise<Record<string, unknown>> {
    const url = oauthEndpoints(def, this.services().settings.get()).tokenUrl!;
    const reply = await tokenCall(def, url, fields, encoding).catch((err: Error) => {
      throw new RouterError(502, `The ${def.name} token endpoint could not be reached: ${err.message}`, { code: 'oauth_unreachable' });
    });
    if (reply.status >= 400 || typeof reply.json?.access_token !== 'string') {
      const message = redactSecrets(oauthErrorText(reply.status, reply.json, reply.text), secrets);
      throw new RouterError(reply.status >= 500 ? 502 : 400, `The ${def.name} login failed: ${message}`, { code: 'oauth_exchange_failed' });
    }
    return reply.json;
  }

  private save(def: ProviderDef, body: Record<string, unknown>) {
    return saveLogin(this.services(), def, {
      accessToken: body.access_token as string,
      refreshToken: typeof body.refresh_token === 'string' ? body.refresh_token : undefined,
      idToken: typeof body.id_token === 'string' ? body.id_token : undefined,
      expiresAt: expiryFrom(body),
      extra: body,
    }).catch((err: unknown) => {
      if (err instanceof RouterError) throw err;
      this.services().log.warn('oauth login failed', { provider: def.id, error: (err as Error).message });
      throw new RouterError(502, `The ${def.name} login could not be completed: ${publicReason(err)}.`, { code: 'oauth_setup_failed' });
    });
  }

  /** Starts a device login: the provider's user code and where to enter it. */
  async deviceCode(def: ProviderDef): Promise<OAuthDeviceCodeReply> {
    const cfg = this.config(def, 'device');
    this.admit();
    const fields: Record<string, string> = { client_id: cfg.clientId };
    if (cfg.deviceScope) fields.scope = cfg.deviceScope;
    const pkce = cfg.devicePkce ? newPkce() : undefined;
    if (pkce) Object.assign(fields, { code_challenge: pkce.challenge, code_challenge_method: 'S256' });
    const url = oauthEndpoints(def, this.services().settings.get()).deviceAuthorizationUrl!;
    const reply = await oauthCall({ url, def, form: fields }).catch((err: Error) => {
      throw new RouterError(502, `The ${def.name} device endpoint could not be reached: ${err.message}`, { code: 'oauth_unreachable' });
    });
    const b = reply.json ?? {};
    if (reply.status >= 400 || typeof b.device_code !== 'string' || typeof b.user_code !== 'string') {
      throw new RouterError(502, `The ${def.name} device login could not start: ${oauthErrorText(reply.status, reply.json, reply.text)}`, { code: 'oauth_device_failed' });
    }
    const expiresIn = typeof b.expires_in === 'number' && b.expires_in > 0 ? b.expires_in : 900;
    const interval = typeof b.interval === 'number' && b.interval >= 0 ? b.interval : 5;
    const state = newState();
    this.pending.set(state, { provider: def.id, kind: 'device', verifier: pkce?.verifier, deviceCode: b.device_code, interval, expiresAt: Date.now() + expiresIn * 1000, status: 'pending' });
    const verification = (b.verification_uri ?? b.verification_url) as string | undefined;
    return {
      state,
      user_code: b.user_code,
      verification_uri: verification ?? '',
      ...(typeof b.verification_uri_complete === 'string' ? { verification_uri_complete: b.verification_uri_complete } : {}),
      interval,
      expires_in: expiresIn,
    };
  }

  /** One poll of a device login (RFC 8628 section 3.5): pending, slow_down (+5 s), expired, denied or complete. */
  async poll(def: ProviderDef, state: string): Promise<PollOutcome> {
    const login = this.pending.get(state);
    if (!login || login.provider !== def.id || login.kind !== 'device') throw badRequest('Unknown or finished device login.', 'state');
    if (login.expiresAt <= Date.now()) {
      this.pending.delete(state);
      return { status: 'expired', error: 'The device code expired; start the login again.' };
    }
    if (login.busy) return { status: 'pending', interval: login.interval };
    login.busy = true;
    try {
      return await this.pollOnce(def, state, login);
    } finally {
      login.busy = false;
    }
  }

  private async pollOnce(def: ProviderDef, state: string, login: PendingLogin): Promise<PollOutcome> {
    const cfg = def.oauth!;
    const fields: Record<string, string> = { grant_type: DEVICE_GRANT, device_code: login.deviceCode!, client_id: cfg.clientId };
    if (login.verifier) fields.code_verifier = login.verifier;
    const url = oauthEndpoints(def, this.services().settings.get()).tokenUrl!;
    const reply = await tokenCall(def, url, fields, 'form').catch((err: Error) => {
      throw new RouterError(502, `The ${def.name} token endpoint could not be reached: ${err.message}`, { code: 'oauth_unreachable' });
    });
    const b = reply.json ?? {};
    // GitHub answers these with 200, others with 400: the `error` field decides.
    const error = typeof b.error === 'string' ? b.error : undefined;
    if (error === 'authorization_pending') return { status: 'pending', interval: login.interval };
    if (error === 'slow_down') {
      login.interval = (login.interval ?? 5) + 5;
      return { status: 'slow_down', interval: login.interval };
    }
    if (error || reply.status >= 400 || typeof b.access_token !== 'string') {
      this.pending.delete(state);
      const description = typeof b.error_description === 'string' ? b.error_description : (error ?? `status ${reply.status}`);
      if (error === 'expired_token') return { status: 'expired', error: 'The device code expired; start the login again.' };
      if (error === 'access_denied') return { status: 'denied', error: 'The login was declined.' };
      return { status: 'error', error: `The ${def.name} login failed: ${description}` };
    }
    this.pending.delete(state);
    const { connection } = await this.save(def, b);
    return { status: 'complete', connection };
  }
}

/** The loopback redirect URI a provider registered (`http://localhost:<port><path>`). */
function loopbackUri(cfg: OAuthConfig, port: number): string {
  return `http://${cfg.redirect?.host ?? 'localhost'}:${port}${cfg.redirect?.path ?? '/callback'}`;
}

/** An OAuth error reply as `[error]: description` (RFC 6749 5.2), else the provider's own error shape. */
function oauthErrorText(status: number, json: Record<string, unknown> | undefined, text: string): string {
  if (typeof json?.error === 'string') {
    const description = typeof json.error_description === 'string' ? json.error_description : 'refused';
    return formatProviderError(json.error, description);
  }
  const e = extractUpstreamError(status, text);
  return formatProviderError(e.code ?? status, e.message || 'no access_token in the reply');
}
