import {
  CLOUD_AUTH_HEADER, CLOUD_SIG_HEADER, SYNC_MAX_BODY_BYTES, type SyncAction, type SyncRemoteRequest, type SyncReply, type SyncReport, type SyncSnapshot,
} from '../../shared/sync.js';
import { RouterError } from '../http/errors.js';
import { describeFailure } from '../net/probe.js';
import { proxyFor } from '../net/outbound-proxy.js';
import { sendUpstream } from '../net/upstream.js';
import type { Services } from '../services.js';
import { applySnapshot, type ApplyOptions } from './apply.js';
import { buildSnapshot, snapshotSchema } from './snapshot.js';
import { newNonce, signRequestAuth, signSync, verifyRequestAuth, verifySync, type RequestAuth } from './signature.js';
import type { cloudSyncSettingsSchema } from './settings.js';
import type { z } from 'zod';

/** A request more than this off the remote's clock is refused; within it, its nonce is refused a second time. */
export const MAX_SKEW_MS = 5 * 60_000;
const REMOTE_TIMEOUT_MS = 30_000;

type CloudSync = z.infer<typeof cloudSyncSettingsSchema>;
let lastSync: { action: SyncAction; at: string } | null = null;

function configured(services: Services): CloudSync {
  const cfg = services.settings.get().cloudSync;
  if (!cfg.enabled) throw new RouterError(409, 'Cloud sync is off: set cloudSync.enabled, url and secret (PATCH /api/settings).', { code: 'sync_disabled' });
  if (!cfg.url || !cfg.secret) throw new RouterError(409, 'Cloud sync needs cloudSync.url and cloudSync.secret.', { code: 'sync_not_configured' });
  return cfg;
}

const applyOptions = (cfg: CloudSync): ApplyOptions => ({
  secret: cfg.secret, overwriteCredentials: cfg.overwriteCredentials, applySecurityChanges: cfg.applySecurityChanges,
});

/**
 * One signed exchange with the remote. The request carries a fresh nonce (in the signed body and in the
 * signed X-Cloud-Sync-Auth header); the reply's X-Cloud-Sig is checked (constant time) against the raw body
 * before the body is even parsed, and the reply must echo the nonce, so an old signed reply replayed to
 * this request is refused. Any failure is a 502 and nothing is applied.
 */
async function exchange(services: Services, action: SyncAction, snapshot?: SyncSnapshot): Promise<Record<string, unknown>> {
  const { url, secret } = configured(services);
  const nonce = newNonce();
  const sentAt = Date.now();
  const req: SyncRemoteRequest = { action, sentAt: new Date(sentAt).toISOString(), nonce, ...(snapshot ? { snapshot } : {}) };
  const body = JSON.stringify(req);
  const length = Buffer.byteLength(body, 'utf8');
  if (length > SYNC_MAX_BODY_BYTES) {
    throw new RouterError(413, `This configuration is ${length} bytes as a sync snapshot, over the sync limit of ${SYNC_MAX_BODY_BYTES} bytes.`, { code: 'sync_too_large' });
  }
  let text: string;
  let status: number;
  let sig: string | undefined;
  try {
    const reply = await sendUpstream({
      url,
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json',
        [CLOUD_SIG_HEADER]: signSync(secret, body),
        [CLOUD_AUTH_HEADER]: signRequestAuth(secret, { nonce, sentAt, length }),
      },
      body,
      signal: AbortSignal.timeout(REMOTE_TIMEOUT_MS),
    });
    status = reply.statusCode;
    const h = reply.headers[CLOUD_SIG_HEADER];
    sig = Array.isArray(h) ? h[0] : h;
    text = await reply.text(SYNC_MAX_BODY_BYTES);
  } catch (err) {
    throw new RouterError(502, `Sync remote not reachable: ${describeFailure(err, url, proxyFor(new URL(url)))}.`, { code: 'sync_remote_unreachable' });
  }
  if (status >= 400 && !sig) {
    // A refusal (a router signs only what it answers); nothing in it is applied, its message is shown.
    let msg = `HTTP ${status}`;
    try {
      const m = (JSON.parse(text) as { error?: { message?: unknown } }).error?.message;
      if (typeof m === 'string') msg = `${m.slice(0, 300)} (HTTP ${status})`;
    } catch {}
    throw new RouterError(502, `Sync remote refused the request: ${msg}`, { code: 'sync_remote_error' });
  }
  if (!verifySync(secret, text, sig)) {
    throw new RouterError(502, `Sync remote reply refused: its ${CLOUD_SIG_HEADER} signature is missing or wrong (HTTP ${status}); nothing was applied.`, { code: 'sync_bad_signature' });
  }
  let parsed: Record<string, unknown>;
  try {
    parsed = JSON.parse(text) as Record<string, unknown>;
  } catch {
    throw new RouterError(502, 'Sync remote reply is not JSON; nothing was applied.', { code: 'sync_bad_reply' });
  }
  if (status >= 400) {
    const msg = (parsed.error as { message?: string } | undefined)?.message ?? `HTTP ${status}`;
    throw new RouterError(502, `Sync remote refused the request: ${msg}`, { code: 'sync_remote_error' });
  }
  if (parsed.nonce !== nonce) {
    throw new RouterError(502, 'Sync remote reply does not answer this request (its nonce differs: replayed, misrouted, or a remote on an older sync protocol); nothing was applied.', { code: 'sync_bad_reply' });
  }
  return parsed;
}

/** Runs one sync action against the configured remote (POST /api/sync/cloud). */
export async function runSync(services: Services, action: SyncAction): Promise<SyncReply> {
  const cfg = configured(services);
  if (action === 'status') {
    const r = await exchange(services, action);
    return { action, remote: r.remote as SyncReply['remote'], lastSync };
  }
  if (action === 'push') {
    const r = await exchange(services, action, buildSnapshot(services, cfg.secret));
    lastSync = { action, at: new Date().toISOString() };
    return { action, report: r.report as SyncReport };
  }
  const r = await exchange(services, action);
  const snap = snapshotSchema.safeParse(r.snapshot);
  if (!snap.success) throw new RouterError(502, 'Sync remote sent no valid snapshot; nothing was applied.', { code: 'sync_bad_reply' });
  const report = await applySnapshot(services, snap.data, applyOptions(configured(services)));
  lastSync = { action, at: new Date().toISOString() };
  return { action, report };
}

/** A refusal before the body was read: the connection closes with it, so the unread body is not taken in. */
const early = (status: number, message: string, code?: string) => new RouterError(status, message, { ...(code ? { code } : {}), headers: { connection: 'close' } });

/**
 * The remote side's checks before a byte of the body is read (POST /api/sync/cloud/remote; the route's
 * body limit, SYNC_MAX_BODY_BYTES, refused a larger Content-Length already): sync on, a JSON body, a valid
 * X-Cloud-Sync-Auth (signed nonce, time and length), the time within 5 minutes, a Content-Length equal to
 * the signed length, and a nonce never seen (taken now, so two copies racing cannot both pass).
 */
export async function admitRemote(services: Services, headers: Headers): Promise<{ cfg: CloudSync; auth: RequestAuth }> {
  const cfg = services.settings.get().cloudSync;
  // Sync off or no secret: the route does not exist as far as a caller can tell.
  if (!cfg.enabled || !cfg.secret) throw early(404, 'Not found.');
  if (!/^application\/json\b/i.test(headers.get('content-type') ?? '')) throw early(415, 'Content-Type must be application/json.');
  const auth = verifyRequestAuth(cfg.secret, headers.get(CLOUD_AUTH_HEADER));
  if (!auth) throw early(401, `Missing or wrong ${CLOUD_AUTH_HEADER} signature.`, 'sync_bad_signature');
  if (!(Math.abs(Date.now() - auth.sentAt) <= MAX_SKEW_MS)) throw early(400, "The request's time is more than 5 minutes off this machine's clock.", 'sync_stale_request');
  const declared = headers.get('content-length');
  if (declared === null) throw early(411, 'Content-Length is required.');
  if (Number(declared) !== auth.length) throw early(400, `Content-Length differs from the length in ${CLOUD_AUTH_HEADER}.`, 'sync_bad_signature');
  if (!(await services.syncNonces.take(auth.nonce, auth.sentAt + MAX_SKEW_MS + 1000, Date.now()))) {
    throw early(409, 'This request was already answered (its nonce was seen): a replay is refused.', 'sync_replayed');
  }
  return { cfg, auth };
}

/**
 * The remote side once the body is read: checks its X-Cloud-Sig and that it carries the admitted nonce and
 * time, then answers pull (this router's snapshot), push (applies the caller's snapshot with this router's
 * own rules) or status. The reply echoes the nonce; returns its body and signature.
 */
export async function answerRemote(services: Services, admitted: { cfg: CloudSync; auth: RequestAuth }, raw: string, sig: string | null): Promise<{ body: string; sig: string }> {
  const { cfg, auth } = admitted;
  if (!verifySync(cfg.secret, raw, sig)) throw new RouterError(401, `Missing or wrong ${CLOUD_SIG_HEADER} signature.`, { code: 'sync_bad_signature' });
  let req: SyncRemoteRequest;
  try {
    req = JSON.parse(raw) as SyncRemoteRequest;
  } catch {
    throw new RouterError(400, 'Body is not JSON.');
  }
  if (req.nonce !== auth.nonce || Date.parse(String(req.sentAt)) !== auth.sentAt) {
    throw new RouterError(401, `The body's nonce or sentAt differs from ${CLOUD_AUTH_HEADER}.`, { code: 'sync_bad_signature' });
  }
  let reply: Record<string, unknown>;
  if (req.action === 'pull') reply = { snapshot: buildSnapshot(services, cfg.secret) };
  else if (req.action === 'status') {
    const s = buildSnapshot(services, cfg.secret);
    reply = { remote: { exportedAt: s.exportedAt, counts: { connections: s.connections.length, nodes: s.nodes.length, combos: s.combos.length, keys: s.keys.length } } };
  } else if (req.action === 'push') {
    const snap = snapshotSchema.safeParse(req.snapshot);
    if (!snap.success) throw new RouterError(400, 'snapshot is missing or not a router-sync/2 snapshot.');
    reply = { report: await applySnapshot(services, snap.data, applyOptions(cfg)) };
    lastSync = { action: 'push', at: new Date().toISOString() };
  } else throw new RouterError(400, "action must be 'push', 'pull' or 'status'.");
  const body = JSON.stringify({ ...reply, nonce: auth.nonce });
  if (Buffer.byteLength(body, 'utf8') > SYNC_MAX_BODY_BYTES) {
    throw new RouterError(413, `This router's configuration is over the sync limit of ${SYNC_MAX_BODY_BYTES} bytes as a snapshot.`, { code: 'sync_too_large' });
  }
  return { body, sig: signSync(cfg.secret, body) };
}
