import { RouterError } from '../http/errors.js';
import type { ProviderDef } from './types.js';

/**
 * Model ids as each provider's wire carries them. A Gemini-format upstream takes the id in the URL
 * (`models/{id}:generateContent`), so its id is one path segment of Google's grammar (`gemini-2.5-pro`,
 * `imagen-3.0-generate-002`): letters, digits, `.`, `_` and `-`, starting with a letter or digit. A `/`,
 * `..` or `%` there would address another resource (`models/x/../../tunedModels/y`) with the owner's
 * credential, outside the model the key's `model:` scopes allowed. Other formats carry the id in the JSON
 * body, where ids with slashes (`meta-llama/Llama-3-8B`), colons (`llama3:8b`) and `@` are normal; those
 * only refuse control characters and empty, `.` or `..` segments, which no provider names a model with.
 */
const GEMINI_MODEL_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,199}$/;
const CONTROL = /[\u0000-\u001f\u007f]/;

/** Why `model` is not a model id `def` can be sent, or undefined when it is one. */
export function modelIdProblem(def: Pick<ProviderDef, 'format'>, model: string): string | undefined {
  if (def.format === 'gemini') {
    return GEMINI_MODEL_ID.test(model) ? undefined : 'a Gemini model id is one name of letters, digits, ".", "_" and "-" (e.g. gemini-2.5-pro)';
  }
  if (CONTROL.test(model)) return 'a model id has no control characters';
  if (model.split('/').some((s) => s === '' || s === '.' || s === '..')) return "a model id has no empty, '.' or '..' parts";
  return undefined;
}

/** Throws the 400 (`invalid_model`, param `model`) for an id the provider's grammar refuses. */
export function checkModelId(def: Pick<ProviderDef, 'format'>, model: string, publicModel: string): void {
  const problem = modelIdProblem(def, model);
  if (problem) throw new RouterError(400, `Invalid model '${publicModel.slice(0, 200)}': ${problem}.`, { code: 'invalid_model', extra: { param: 'model' } });
}
