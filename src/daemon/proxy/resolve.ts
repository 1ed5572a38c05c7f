import { badRequest } from '../http/errors.js';
import { unknownModel } from './plan.js';
import type { PipelineDeps } from './deps.js';
import type { Target } from '../providers/target.js';

/**
 * Resolves the model a client named into the targets that can serve it, in the order to try them:
 * `<provider>/<model>` (provider id, alias, node id or node prefix). An unknown model is a 404, never
 * routed to some default provider (spec, proxy endpoints: an unrecognized model is rejected, never defaulted).
 */
export function resolveTargets(services: PipelineDeps, model: unknown): readonly Target[] {
  if (typeof model !== 'string' || model.trim() === '') throw badRequest("The 'model' field is required.", 'model');
  if (model.length > 512) throw badRequest("The 'model' field is too long.", 'model');
  const split = services.providers.split(model);
  if (split) return services.providers.targets(split.def, split.model, model);
  throw unknownModel(services, model);
}
