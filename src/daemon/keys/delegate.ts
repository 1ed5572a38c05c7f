import { globMatch } from '../../shared/glob.js';
import type { AuthInfo } from '../auth/pipeline.js';
import { RouterError } from '../http/errors.js';
import { normalizeScopes, pathAllowed } from './store.js';

/**
 * What a restricted key may hand out. A manage-scope key that holds `path:` or `model:` scopes is confined
 * by them; the keys it creates or changes must be confined at least as much, or it could mint its own way
 * out (issue 27): no capability it lacks (`proxy`, `manage`), each `path:` prefix inside one of its own,
 * each `model:` pattern matched by one of its own (a `*` in the new pattern is read as a plain character,
 * so `gemini/pro*` is inside `gemini/*`). A key without such scopes, a session and the CLI token stand for
 * the owner and grant anything. Undefined when `scopes` fit, else why not.
 */
export function beyondCaller(caller: readonly string[], scopes: readonly string[]): string | undefined {
  const ownPaths = caller.filter((s) => s.startsWith('path:'));
  const ownModels = caller.filter((s) => s.startsWith('model:'));
  if (ownPaths.length === 0 && ownModels.length === 0) return undefined;
  for (const s of scopes) if ((s === 'proxy' || s === 'manage') && !caller.includes(s)) return `the '${s}' scope, which it does not hold`;
  if (ownPaths.length > 0) {
    const paths = scopes.filter((s) => s.startsWith('path:'));
    if (paths.length === 0) return 'a key without path: scopes';
    const outside = paths.find((s) => !pathAllowed(ownPaths, s.slice(5)));
    if (outside) return `'${outside}', outside its own path: scopes`;
  }
  if (ownModels.length > 0) {
    const models = scopes.filter((s) => s.startsWith('model:'));
    if (models.length === 0) return 'a key without model: scopes';
    const outside = models.find((m) => !ownModels.some((g) => globMatch(g.slice(6), m.slice(6))));
    if (outside) return `'${outside}', outside its own model: scopes`;
  }
  return undefined;
}

/** Throws 403 (`scope_not_allowed`) when an API-key caller would create or change a key beyond its own scopes. */
export function checkGrant(auth: AuthInfo, scopes: readonly string[], what: 'create' | 'change'): void {
  if (auth.via !== 'api-key' || !auth.key) return;
  const problem = beyondCaller(auth.key.scopes, normalizeScopes(scopes));
  if (!problem) return;
  const verb = what === 'create' ? 'create a key with' : 'change a key that has or would get';
  throw new RouterError(403, `This API key cannot ${verb} ${problem}: a key only manages keys within its own scopes.`, {
    code: 'scope_not_allowed',
    type: 'permission_error',
    extra: { param: 'scopes' },
  });
}
