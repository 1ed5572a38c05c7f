import { speech, transcriptions, translations } from './audio/index.js';
import { embeddings } from './embeddings/index.js';
import type { Family } from './family.js';
import { imageEdits, images } from './images/index.js';
import { moderation } from './moderation/index.js';
import { rerank, rerankV2 } from './rerank/index.js';

/**
 * The endpoint families beside chat (whose codecs are translate/registry.ts). Each entry is served on its
 * route through the one executor (proxy/family-run.ts; routes from proxy/family-routes.ts). Adding a family
 * is its folder plus one line here.
 */
export const families: Family<any>[] = [
  embeddings,
  images,
  imageEdits,
  speech,
  transcriptions,
  translations,
  moderation,
  rerank,
  rerankV2,
];

/** A registered family by name; throws when none is (a wiring bug). */
export function familyNamed(name: string): Family<any> {
  const family = families.find((f) => f.name === name);
  if (!family) throw new Error(`No endpoint family '${name}' is registered.`);
  return family;
}
