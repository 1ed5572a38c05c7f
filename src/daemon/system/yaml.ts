import { createRequire } from 'node:module';

type Yaml = typeof import('yaml');
let loaded: Yaml | undefined;

/**
 * The yaml package, loaded on first use (skills' SKILL.md front matter, vault notes): about 4 MB of memory a
 * daemon with no skills and no vault never carries (issue 33 item 2). Its CommonJS build is required
 * synchronously, so the parsers that use it stay synchronous.
 */
export function yaml(): Yaml {
  loaded ??= createRequire(import.meta.url)('yaml') as Yaml;
  return loaded;
}
