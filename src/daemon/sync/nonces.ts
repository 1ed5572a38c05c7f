import type { Db } from '../store/db.js';

/**
 * Seen nonces of signed sync requests, in the database so that a restart does not reopen the window. A
 * nonce is kept until a request carrying it would fail the clock check anyway; taking one is a single
 * INSERT, so two copies of a request racing each other cannot both pass.
 */
const statements = new WeakMap<Db, { prune: { run(now: number): unknown }; take: { run(nonce: string, expires: number): { changes: number } } }>();

function prepared(db: Db) {
  let s = statements.get(db);
  if (!s) {
    s = {
      prune: db.prepare('DELETE FROM sync_nonces WHERE expires_at < ?'),
      take: db.prepare('INSERT OR IGNORE INTO sync_nonces (nonce, expires_at) VALUES (?, ?)'),
    };
    statements.set(db, s);
  }
  return s;
}

/** Records `nonce` as used until `expiresAt` (epoch ms); false when it was already used (a replay). */
export function takeNonce(db: Db, nonce: string, expiresAt: number, now = Date.now()): boolean {
  const s = prepared(db);
  s.prune.run(now);
  return s.take.run(nonce, expiresAt).changes === 1;
}
