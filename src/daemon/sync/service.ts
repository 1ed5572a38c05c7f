import { CLOUD_SIG_HEADER, type SyncAction, type SyncRemoteRequest, type SyncReply, type SyncReport } from '../../shared/sync.js';
import { RouterError } from '../http/errors.js';
import { describeFailure } from '../net/probe.js';
import { proxyFor } from '../net/outbound-proxy.js';
import { sendUpstream } from '../proxy/upstream.js';
import type { Services } from '../services.js';
import { applySnapshot, buildSnapshot, snapshotSchema } from './snapshot.js';
import { signSync, verifySync } from './signature.js';

/** A request older (or newer) than this is refused by the remote side: a captured one cannot be replayed later. */
export const MAX_SKEW_MS = 5 * 60_000;
const REMOTE_TIMEOUT_MS = 30_000;
const MAX_REPLY_BYTES = 64 * 1024 * 1024;

let lastSync: { action: SyncAction; at: string } | null = null;

function configured(services: Services): { url: string; secret: string; overwriteCredentials: boolean } {
  const cfg = services.settings.get().cloudSync;
  if (!cfg.enabled) throw new RouterError(409, 'Cloud sync is off: set cloudSync.enabled, url and secret (PATCH /api/settings).', { code: 'sync_disabled' });
  if (!cfg.url || !cfg.secret) throw new RouterError(409, 'Cloud sync needs cloudSync.url and cloudSync.secret.', { code: 'sync_not_configured' });
  return cfg;
}

/**
 * One signed exchange with the remote. The reply's X-Cloud-Sig is checked (constant time) against the raw
 * body before the body is even parsed; a missing or wrong signature is a 502 and nothing is applied.
 */
async function exchange(services: Services, req: SyncRemoteRequest): Promise<Record<string, unknown>> {
  const { url, secret } = configured(services);
  const body = JSON.stringify(req);
  let text: string;
  let status: number;
  let sig: string | undefined;
  try {
    const reply = await sendUpstream({
      url,
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json', [CLOUD_SIG_HEADER]: signSync(secret, body) },
      body,
      signal: AbortSignal.timeout(REMOTE_TIMEOUT_MS),
    });
    status = reply.statusCode;
    const h = reply.headers[CLOUD_SIG_HEADER];
    sig = Array.isArray(h) ? h[0] : h;
    text = await reply.text(MAX_REPLY_BYTES);
  } catch (err) {
    throw new RouterError(502, `Sync remote not reachable: ${describeFailure(err, url, proxyFor(new URL(url)))}.`, { code: 'sync_remote_unreachable' });
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
  return parsed;
}

/** Runs one sync action against the configured remote (POST /api/sync/cloud). */
export async function runSync(services: Services, action: SyncAction): Promise<SyncReply> {
  const { secret, overwriteCredentials } = configured(services);
  const sentAt = new Date().toISOString();
  if (action === 'status') {
    const r = await exchange(services, { action, sentAt });
    return { action, remote: r.remote as SyncReply['remote'], lastSync };
  }
  if (action === 'push') {
    const r = await exchange(services, { action, sentAt, snapshot: buildSnapshot(services, secret) });
    lastSync = { action, at: new Date().toISOString() };
    return { action, report: r.report as SyncReport };
  }
  const r = await exchange(services, { action, sentAt });
  const snap = snapshotSchema.safeParse(r.snapshot);
  if (!snap.success) throw new RouterError(502, 'Sync remote sent no valid snapshot; nothing was applied.', { code: 'sync_bad_reply' });
  const report = applySnapshot(services, snap.data, secret, overwriteCredentials);
  lastSync = { action, at: new Date().toISOString() };
  return { action, report };
}

/**
 * The remote side (POST /api/sync/cloud/remote): checks the request's signature and age, then answers
 * pull (this router's snapshot), push (applies the caller's snapshot with this router's own rules) or
 * status. Returns the reply body and its signature.
 */
export function answerRemote(services: Services, raw: string, sig: string | null): { body: string; sig: string } {
  const cfg = services.settings.get().cloudSync;
  // Sync off or no secret: the route does not exist as far as a caller can tell.
  if (!cfg.enabled || !cfg.secret) throw new RouterError(404, 'Not found.');
  if (!verifySync(cfg.secret, raw, sig)) throw new RouterError(401, `Missing or wrong ${CLOUD_SIG_HEADER} signature.`, { code: 'sync_bad_signature' });
  let req: SyncRemoteRequest;
  try {
    req = JSON.parse(raw) as SyncRemoteRequest;
  } catch {
    throw new RouterError(400, 'Body is not JSON.');
  }
  const age = Math.abs(Date.now() - Date.parse(String(req.sentAt)));
  if (!(age <= MAX_SKEW_MS)) throw new RouterError(400, 'sentAt is missing or more than 5 minutes off this machine\'s clock.', { code: 'sync_stale_request' });
  let reply: Record<string, unknown>;
  if (req.action === 'pull') reply = { snapshot: buildSnapshot(services, cfg.secret) };
  else if (req.action === 'status') {
    const s = buildSnapshot(services, cfg.secret);
    reply = { remote: { exportedAt: s.exportedAt, counts: { connections: s.connections.length, nodes: s.nodes.length, combos: s.combos.length, keys: s.keys.length } } };
  } else if (req.action === 'push') {
    const snap = snapshotSchema.safeParse(req.snapshot);
    if (!snap.success) throw new RouterError(400, 'snapshot is missing or not a router-sync/1 snapshot.');
    reply = { report: applySnapshot(services, snap.data, cfg.secret, cfg.overwriteCredentials) };
    lastSync = { action: 'push', at: new Date().toISOString() };
  } else throw new RouterError(400, "action must be 'push', 'pull' or 'status'.");
  const body = JSON.stringify(reply);
  return { body, sig: signSync(cfg.secret, body) };
}
