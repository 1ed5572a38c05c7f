#!/usr/bin/env node
// Soak and fault run against the real daemon (dist/, fresh state folder) and the mock upstreams of
// test/mocks: mixed traffic in every client format with faults, sampling the daemon's RSS, heap, open
// descriptors and event-loop delay. Exit 1 with the table when RSS or descriptors grow past their bound
// after warm-up, a request hangs past its deadline, or completed requests and usage rows differ.
//
//   npx tsc -p tsconfig.json && node bench/soak.mjs            30 minutes
//   node bench/soak.mjs --quick                                  10 minutes
//   node bench/soak.mjs --minutes N [--concurrency 8]
//
// The run itself is test/soak/run.ts (also used by the short version in `npm test`); the TypeScript
// sources (it and the mocks) are loaded through Vite's module runner, which vitest already brings.
import { fileURLToPath } from 'node:url';
import { createServer, createServerModuleRunner } from 'vite';

const args = process.argv.slice(2);
const opt = (name, def) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? Number(args[i + 1]) : def;
};
const minutes = opt('minutes', args.includes('--quick') ? 10 : 30);
const concurrency = opt('concurrency', 8);
if (!(minutes > 0) || !(concurrency > 0)) {
  console.error('usage: node bench/soak.mjs [--quick | --minutes N] [--concurrency N]');
  process.exit(2);
}

const root = fileURLToPath(new URL('..', import.meta.url));
const vite = await createServer({
  root,
  configFile: false,
  logLevel: 'error',
  appType: 'custom',
  server: { middlewareMode: true, hmr: false, ws: false, watch: null },
});
const runner = createServerModuleRunner(vite.environments.ssr, { hmr: false });
let code = 1;
try {
  const { runSoak } = await runner.import('/test/soak/run.ts');
  const t0 = Date.now();
  console.log(`soak: ${minutes} min, ${concurrency} client loops; load average ${(await import('node:os')).loadavg().map((x) => x.toFixed(2)).join(' ')}`);
  const result = await runSoak({
    durationMs: minutes * 60_000,
    concurrency,
    log: (line) => console.log(`[${new Date().toISOString().slice(11, 19)}] ${line}`),
  });
  console.log('');
  console.log(result.table);
  console.log(`wall time ${((Date.now() - t0) / 60_000).toFixed(1)} min`);
  code = result.ok ? 0 : 1;
} finally {
  await runner.close();
  await vite.close();
}
process.exit(code);
