import { randomBytes } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { SettingsRepository } from '../settings/port.js';
import type { ProviderRepository } from '../providers/port.js';
import { SecretError, decryptWithKey, encryptWithKey } from '../store/secrets.js';

/**
 * Who this daemon is in a cluster and which key seals its secrets (CONTRACT "Wave three > Cluster mode").
 * Both are read once at start, from the environment `router start` passes (`--node-id`, `--secret-key-file`)
 * or the user sets (ROUTER_NODE_ID, ROUTER_SECRET_KEY, ROUTER_SECRET_KEY_FILE): flags would show a key in
 * `ps`, the environment does not.
 */

/** A refusal to start, with a one-line message the CLI prints as is. */
export class StartRefused extends Error {
  override name = 'StartRefused';
}

const NODE_ID_RE = /^[A-Za-z0-9._-]{1,64}$/;

/** `--node-id` > ROUTER_NODE_ID > the id generated once and kept in the state folder (`node-id`). */
export function resolveNodeId(home: string, env: NodeJS.ProcessEnv = process.env): string {
  const given = env.ROUTER_NODE_ID;
  if (given !== undefined && given !== '') {
    if (!NODE_ID_RE.test(given)) throw new StartRefused(`the node id '${given.slice(0, 80)}' is not valid: use 1-64 letters, digits, '.', '_' or '-'`);
    return given;
  }
  const file = join(home, 'node-id');
  try {
    const kept = readFileSync(file, 'utf8').trim();
    if (NODE_ID_RE.test(kept)) return kept;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  const id = `node-${randomBytes(4).toString('hex')}`;
  writeFileSync(file, `${id}\n`, { mode: 0o600 });
  return id;
}

/**
 * The sealing key given to this node: ROUTER_SECRET_KEY (64 hex characters) or the file named by
 * ROUTER_SECRET_KEY_FILE (`--secret-key-file`; 32 raw bytes or 64 hex characters). Undefined: the state
 * folder's own `secret.key`, as on one machine.
 */
export function resolveSecretKey(env: NodeJS.ProcessEnv = process.env): Buffer | undefined {
  const inline = env.ROUTER_SECRET_KEY;
  if (inline !== undefined && inline !== '') {
    const key = fromHex(inline.trim());
    if (!key) throw new StartRefused('ROUTER_SECRET_KEY must be 64 hexadecimal characters (32 bytes)');
    return key;
  }
  const file = env.ROUTER_SECRET_KEY_FILE;
  if (file === undefined || file === '') return undefined;
  let raw: Buffer;
  try {
    raw = readFileSync(file);
  } catch (err) {
    throw new StartRefused(`cannot read the secret key file (${(err as NodeJS.ErrnoException).code ?? 'unreadable'})`);
  }
  const key = raw.length === 32 ? raw : fromHex(raw.toString('utf8').trim());
  if (!key) throw new StartRefused('the secret key file must hold 32 bytes, or 64 hexadecimal characters');
  return key;
}

function opens(enc: string, key: Buffer, context: string): boolean {
  try {
    decryptWithKey(enc, key, context);
    return true;
  } catch {
    return false;
  }
}

function fromHex(text: string): Buffer | undefined {
  return /^[0-9a-fA-F]{64}$/.test(text) ? Buffer.from(text, 'hex') : undefined;
}

/** One secret already sealed in the database (a connection's), with the context it was sealed under. */
export interface SealedSample {
  enc: string;
  context: string;
}

/** The first sealed connection credential of a database (the sample `checkSealingKey` tries the key on). */
export async function sealedConnectionSample(providers: Pick<ProviderRepository, 'sealedSample'>): Promise<SealedSample | undefined> {
  const row = await providers.sealedSample();
  return row && { enc: row.secretsEnc, context: `connection:${row.id}` };
}

/** The settings row holding a value sealed with the cluster's key (the settings store skips unknown keys). */
export const SEALING_CHECK_KEY = '_sealingCheck';
const CHECK_PLAIN = 'router sealing key check v1';

/** The check value sealed under `key`, as stored (`{"enc": ...}`); `context` binds it to where it is kept. */
export function sealCheckValue(key: Buffer, context = `setting:${SEALING_CHECK_KEY}`): string {
  return JSON.stringify({ enc: encryptWithKey(CHECK_PLAIN, key, context) });
}

/** Whether a stored check value opens with `key`. */
export function opensCheckValue(stored: string, key: Buffer, context = `setting:${SEALING_CHECK_KEY}`): boolean {
  let plain: string | undefined;
  try {
    plain = decryptWithKey((JSON.parse(stored) as { enc: string }).enc, key, context);
  } catch (err) {
    if (!(err instanceof SecretError) && !(err instanceof SyntaxError) && !(err instanceof TypeError)) throw err;
  }
  return plain === CHECK_PLAIN;
}

/** The refusal of a node whose key does not open the check value (one line, printed by the CLI as is). */
export const WRONG_KEY_MESSAGE =
  'the secret key given to this node does not open the secrets of its database: start it with the same ROUTER_SECRET_KEY (or --secret-key-file) as the other nodes';

/**
 * Makes sure `key` is the key this database's secrets are sealed with (`sealedSample`: any secret sealed so
 * far, e.g. a provider connection's, or undefined): the first node to start seals a
 * known value under it; every later start opens that value, and a node holding another key refuses to
 * start instead of writing secrets no other node can read. Imports re-seal the row with the rest
 * (backups/rekey.ts sees it as an encrypted setting). On one machine and for each node's own SQLite file;
 * the shared database of a cluster has its own check (cluster/database.ts).
 */
export async function checkSealingKey(settings: SettingsRepository, sealedSample: () => Promise<SealedSample | undefined>, key: Buffer): Promise<void> {
  const context = `setting:${SEALING_CHECK_KEY}`;
  const value = await settings.get(SEALING_CHECK_KEY);
  if (value === undefined) {
    // No check value yet: the first start with a given key. Secrets sealed before (a single machine moving
    // to a given key) must open with it, or they would all be lost at once.
    const old = await sealedSample();
    if (old && !opens(old.enc, key, old.context)) {
      throw new StartRefused("the secret key given to this node does not open the secrets already in its database (sealed with the state folder's secret.key): start without it, or give that key");
    }
    // Two nodes starting together: the first row stays, and this node checks its key against it.
    if (await settings.insertIfAbsent(SEALING_CHECK_KEY, sealCheckValue(key, context), new Date().toISOString())) return;
    return checkSealingKey(settings, sealedSample, key);
  }
  if (!opensCheckValue(value, key, context)) throw new StartRefused(WRONG_KEY_MESSAGE);
}
