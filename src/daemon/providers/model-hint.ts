/**
 * "Did you mean `openai/gpt-4o`?" for a model name that names nothing: a bare model id (`gpt-4o`,
 * `claude-sonnet-4-5`) is looked up among the providers' models, usable providers first; a misspelt
 * provider (`opnai/gpt-4o`) is matched against provider ids, aliases and node prefixes; a misspelt
 * combo name against the combos. Runs only when a request is refused (never on a served request).
 */
import { similar } from '../../shared/suggest.js';
import type { ProviderDirectory } from './directory.js';

/** What the hint reads of the provider directory. */
export type HintProviders = Pick<ProviderDirectory, 'all' | 'publicId' | 'provider' | 'models' | 'usable'>;

/** At most this many suggestions. */
const MAX = 2;

export function modelSuggestions(providers: HintProviders, combos: Iterable<string>, name: string): string[] {
  const slash = name.indexOf('/');
  if (slash > 0) {
    const prefix = name.slice(0, slash);
    const rest = name.slice(slash + 1);
    const ids = new Set<string>();
    for (const def of providers.all()) {
      ids.add(providers.publicId(def));
      for (const a of def.aliases ?? []) ids.add(a);
    }
    const close = similar(prefix, ids).slice(0, MAX);
    return close.map((p) => `${providers.publicId(providers.provider(p)!)}/${rest}`).filter((v, i, all) => all.indexOf(v) === i);
  }
  const usable: string[] = [];
  const other: string[] = [];
  for (const def of providers.all()) {
    if (!providers.models(def).some((m) => m.id === name)) continue;
    (providers.usable(def) ? usable : other).push(`${providers.publicId(def)}/${name}`);
  }
  const found = usable.length ? usable : other;
  if (found.length) return found.slice(0, MAX);
  return similar(name, combos).slice(0, MAX);
}

/** ` Did you mean \`openai/gpt-4o\`?` (or two, joined with "or"); '' when nothing is close. */
export function modelHint(providers: HintProviders, combos: Iterable<string>, name: string): string {
  const list = modelSuggestions(providers, combos, name);
  return list.length ? ` Did you mean ${list.map((s) => `\`${s}\``).join(' or ')}?` : '';
}
