#!/usr/bin/env node
/**
 * Builds the web dashboard into dist/dashboard (run by `npm run build`, so `npm ci` does it through
 * `prepare`): generates the typed API contract (src/shared/api/, read by the CLI and the dashboard) from the route table (needs the daemon built first), runs
 * Vite, then writes a brotli and a gzip copy beside every text file so the daemon serves them compressed
 * without compressing per request.
 */
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';

const root = fileURLToPath(new URL('..', import.meta.url));
const { generate, write } = await import('./api-types.mjs');
write(await generate());

const { build } = await import('vite');
await build({ configFile: join(root, 'dashboard/vite.config.ts') });

const out = join(root, 'dist/dashboard');
function walk(dir) {
  return readdirSync(dir).flatMap((n) => (statSync(join(dir, n)).isDirectory() ? walk(join(dir, n)) : [join(dir, n)]));
}
let raw = 0;
let br = 0;
for (const file of walk(out)) {
  if (!/\.(html|js|css|svg|json|txt)$/.test(file)) continue;
  const body = readFileSync(file);
  const b = brotliCompressSync(body, { params: { [constants.BROTLI_PARAM_QUALITY]: 11, [constants.BROTLI_PARAM_SIZE_HINT]: body.length } });
  writeFileSync(`${file}.br`, b);
  writeFileSync(`${file}.gz`, gzipSync(body, { level: 9 }));
  raw += body.length;
  br += b.length;
}
console.log(`dashboard built: ${(raw / 1024).toFixed(1)} KB, ${(br / 1024).toFixed(1)} KB brotli (dist/dashboard)`);
