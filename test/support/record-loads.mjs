// Loaded with `node --import`: records every module URL the process loads (ESM and CommonJS) into the
// file named by ROUTER_TEST_LOADS, one per line. Used by test/foundation/lazy-load.test.ts.
import { appendFileSync } from 'node:fs';
import Module, { register } from 'node:module';

const out = process.env.ROUTER_TEST_LOADS;
if (out) {
  register(new URL('./record-loads-hooks.mjs', import.meta.url), { data: { out } });
  const load = Module._load;
  Module._load = function (request, parent, isMain) {
    const result = load.apply(this, [request, parent, isMain]);
    try {
      appendFileSync(out, `${Module._resolveFilename(request, parent, isMain)}\n`);
    } catch {
      // a built-in module: nothing to record
    }
    return result;
  };
}
