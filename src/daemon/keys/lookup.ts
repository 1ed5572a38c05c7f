/**
 * API keys named the way people name them: by id or by name, in filters (the request log, usage, sessions)
 * and when a name is given to a new or renamed key.
 */
import { RouterError } from '../http/errors.js';
import type { KeyStore } from './store.js';

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * The stored key id a filter names: a key's id, or the name of exactly one key. An id-shaped value that
 * matches no key is kept (a deleted key's requests are still in the log); a name two keys share is a 400
 * (give the id), and a name no key has a 404 saying so, so an empty answer never stands for a typo.
 */
export function keyIdFor(keys: KeyStore, ref: string, param = 'key'): string {
  if (keys.get(ref)) return ref;
  const named = keys.list().filter((k) => k.name === ref);
  if (named.length === 1) return named[0]!.id;
  if (named.length > 1) {
    throw new RouterError(400, `${named.length} API keys are named '${ref}'; give the key's id instead.`, { code: 'ambiguous_key_name', extra: { param } });
  }
  if (UUID_RE.test(ref)) return ref;
  throw new RouterError(404, `No API key has the name or id '${ref}'.`, { code: 'key_not_found', extra: { param } });
}

/**
 * Refuses a name another key already has (409 `key_name_taken`), as the CLI does: names are how people tell
 * keys apart in logs, usage and filters. `allowDuplicate` is the explicit override (`router keys add --force`).
 */
export function checkKeyName(keys: KeyStore, name: string, allowDuplicate: boolean | undefined, self?: string): void {
  if (allowDuplicate) return;
  const other = keys.list().find((k) => k.name === name && k.id !== self);
  if (other) {
    throw new RouterError(409, `An API key named '${name}' already exists (${other.id}); choose another name.`, {
      code: 'key_name_taken',
      extra: { param: 'name' },
    });
  }
}
