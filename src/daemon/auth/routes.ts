import { z } from 'zod';
import { deleteCookie, parseCookies, setCookie, type H3Event } from 'h3';
import { SESSION_COOKIE } from '../../shared/headers.js';
import { RouterError } from '../http/errors.js';
import { route, json, noContent, type RouteDef } from '../http/routes.js';
import { isoTime, NO_CONTENT, OK } from '../http/replies.js';

/** A session started: the cookie is set; when it ends. */
const sessionReply = z.object({ ok: z.literal(true), expiresAt: isoTime });
const authStatusReply = z.object({ requireLogin: z.boolean(), passwordSet: z.boolean() });
import type { Services } from '../services.js';
import { SESSION_TTL_MS } from './sessions.js';
import { FailureThrottle } from './throttle.js';

/** Slows password guessing: at most 10 failed logins per minute per bucket (see throttleKey). */
const logins = new FailureThrottle(10, 60_000, 'Too many failed logins; try again later.');

/**
 * The throttle bucket of a login attempt: the caller's address and the kind of client. Every process on this
 * machine shares 127.0.0.1, so one bucket per address would let a script lock the owner's browser out (and
 * the reverse). Browsers say their Origin, which the request guard has already limited to router's own
 * origins and allowedOrigins, so pages elsewhere never reach this count.
 */
function throttleKey(event: H3Event, addr: string): string {
  return event.req.headers.get('origin') === null ? `${addr} client` : `${addr} page`;
}

/**
 * Opens a dashboard session: the `auth_token` cookie, HttpOnly (scripts never see it), SameSite=Strict (no
 * other site's page sends it), Secure when the request came over TLS.
 */
async function startSession(event: H3Event, services: Services): Promise<{ ok: true; expiresAt: string }> {
  const session = await services.sessions.create();
  setCookie(event, SESSION_COOKIE, session.token, {
    httpOnly: true,
    sameSite: 'strict',
    secure: event.url.protocol === 'https:',
    path: '/',
    maxAge: Math.floor(SESSION_TTL_MS / 1000),
  });
  return { ok: true, expiresAt: new Date(session.expiresAt).toISOString() };
}

const loginBody = z.object({ password: z.string().min(1).max(1024) }).strict();
const passwordBody = z.object({ password: z.string().min(8).max(1024) }).strict();

/** Dashboard login/logout and the password. */
export const authRoutes: RouteDef[] = [
  route({
    method: 'POST',
    path: '/api/auth/login',
    tier: 'public',
    tag: 'auth',
    summary: 'Log in with the dashboard password; sets the auth_token cookie',
    body: loginBody,
    reply: sessionReply,
    handler: async ({ event, services, auth, body }) => {
      const bucket = throttleKey(event, auth.remoteAddress);
      logins.check(bucket);
      if (!(await services.passwords.verify(body.password))) {
        logins.fail(bucket);
        throw new RouterError(401, 'Wrong password (set one with `router password set`).');
      }
      logins.succeed(bucket);
      return startSession(event, services);
    },
  }),
  route({
    method: 'POST',
    path: '/api/auth/logout',
    tier: 'public',
    tag: 'auth',
    summary: 'End the dashboard session',
    reply: OK,
    handler: async ({ event, services }) => {
      const token = event.req.headers.get('cookie') ? parseCookies(event)[SESSION_COOKIE] : undefined;
      if (token) await services.sessions.revoke(token);
      deleteCookie(event, SESSION_COOKIE, { path: '/' });
      return { ok: true };
    },
  }),
  route({
    method: 'POST',
    path: '/api/auth/session',
    tier: 'management',
    tag: 'auth',
    summary: 'Open a dashboard session without a password: only for a loopback browser while requireLogin is off',
    reply: sessionReply,
    handler: ({ event, services, auth }) => {
      // With requireLogin off a loopback caller is already allowed on management routes; the session lets
      // the dashboard use the client routes too (playground), which take a key or a session, never nothing.
      if (auth.via !== 'open-loopback') {
        throw new RouterError(403, 'A session without a password is only opened for a loopback browser while requireLogin is off; log in instead.');
      }
      return startSession(event, services);
    },
  }),
  route({
    method: 'PUT',
    path: '/api/auth/password',
    tier: 'local',
    tag: 'auth',
    summary: 'Set the dashboard password (ends every existing session)',
    body: passwordBody,
    status: 204,
    reply: NO_CONTENT,
    handler: async ({ services, body }) => {
      await services.passwords.set(body.password);
      await services.sessions.revokeAll();
      return noContent();
    },
  }),
  route({
    method: 'GET',
    path: '/api/auth/status',
    tier: 'public',
    tag: 'auth',
    summary: 'Whether login is required and a password is set',
    reply: authStatusReply,
    handler: async ({ services }) => json(200, { requireLogin: services.settings.get().requireLogin, passwordSet: await services.passwords.isSet() }),
  }),
];
