// Preloaded into the router daemon by the harness (`node --import bench/lib/probe.mjs dist/daemon/entry.js`).
// It changes nothing in the daemon: it measures event-loop delay and answers the harness over the IPC
// channel the daemon already has ({bench:'stats'|'reset'|'profile-start'|'profile-stop'} messages).
// Profiling uses the inspector's sampling profiler, started and stopped around one measured phase.
import { monitorEventLoopDelay } from 'node:perf_hooks';
import fs, { writeFileSync } from 'node:fs';
import { createRequire, syncBuiltinESMExports } from 'node:module';

const eld = monitorEventLoopDelay({ resolution: 10 });
eld.enable();
let session;

// Synchronous disk I/O watch: every fs.*Sync function and better-sqlite3 statement/exec call is wrapped;
// while the harness has counting on, calls are counted by function and call site (first frames outside
// Node internals). Off, the wrappers cost one boolean test.
let counting = false;
const syncCalls = new Map();
const txTimes = [];
function bump(fn) {
  let e = syncCalls.get(fn);
  if (!e) syncCalls.set(fn, (e = { count: 0, sites: new Map() }));
  e.count++;
  if (e.count <= 200) {
    const frames = new Error().stack
      .split('\n')
      .slice(3)
      .map((l) => l.trim().replace(/^at /, '').replace(/\(?file:\/\/[^)]*\/(dist|node_modules)\//, '($1/'))
      .filter((l) => !l.includes('node:internal') && !l.includes('probe.mjs'));
    const site = frames.slice(0, 3).join(' < ');
    e.sites.set(site, (e.sites.get(site) ?? 0) + 1);
  }
}
for (const k of Object.keys(fs)) {
  if (!k.endsWith('Sync') || typeof fs[k] !== 'function' || k === 'writeFileSync') continue;
  const orig = fs[k];
  fs[k] = function (...args) {
    if (counting) bump(`fs.${k}`);
    return orig.apply(this, args);
  };
}
{
  const orig = fs.writeFileSync;
  fs.writeFileSync = function (...args) {
    if (counting) bump('fs.writeFileSync');
    return orig.apply(this, args);
  };
}
syncBuiltinESMExports();
try {
  const Database = createRequire(process.argv[1])('better-sqlite3');
  const db = new Database(':memory:');
  const stmtProto = Object.getPrototypeOf(db.prepare('SELECT 1'));
  for (const m of ['run', 'get', 'all', 'iterate']) {
    const orig = stmtProto[m];
    stmtProto[m] = function (...args) {
      if (counting) bump(`sqlite.${m}`);
      return orig.apply(this, args);
    };
  }
  // Transactions are timed: a batch written on the event loop blocks every request in flight meanwhile.
  const origTx = Database.prototype.transaction;
  Database.prototype.transaction = function (fn) {
    const tx = origTx.call(this, fn);
    const timed = function (...args) {
      if (!counting) return tx.apply(this, args);
      const t0 = performance.now();
      try {
        return tx.apply(this, args);
      } finally {
        txTimes.push(performance.now() - t0);
      }
    };
    for (const k of ['deferred', 'immediate', 'exclusive']) timed[k] = tx[k];
    return timed;
  };
  for (const m of ['exec', 'pragma', 'prepare']) {
    const orig = Database.prototype[m];
    Database.prototype[m] = function (...args) {
      if (counting) bump(`sqlite.${m}`);
      return orig.apply(this, args);
    };
  }
  db.close();
} catch {
  // better-sqlite3 not resolvable from the entry: fs calls are still watched
}

const ms = (ns) => Math.round((ns / 1e6) * 100) / 100;

function post(method, params) {
  return new Promise((resolve, reject) => session.post(method, params ?? {}, (err, res) => (err ? reject(err) : resolve(res))));
}

async function handle(msg) {
  switch (msg.bench) {
    case 'reset':
      eld.reset();
      return {};
    case 'stats': {
      // With --expose-gc on the daemon, {gc: true} collects first: live heap rather than high-water mark.
      if (msg.gc && typeof globalThis.gc === 'function') globalThis.gc();
      const mem = process.memoryUsage();
      return {
        rss: mem.rss,
        heapUsed: mem.heapUsed,
        external: mem.external,
        arrayBuffers: mem.arrayBuffers,
        eld: { p50: ms(eld.percentile(50)), p99: ms(eld.percentile(99)), max: ms(eld.max), mean: ms(eld.mean), count: eld.count },
      };
    }
    case 'syncio': {
      if (msg.on) {
        syncCalls.clear();
        txTimes.length = 0;
        counting = true;
        return {};
      }
      counting = false;
      const calls = {};
      for (const [fn, e] of syncCalls) calls[fn] = { count: e.count, sites: Object.fromEntries([...e.sites].sort((a, b) => b[1] - a[1]).slice(0, 5)) };
      const tx = [...txTimes].sort((a, b) => a - b);
      const r2 = (x) => Math.round(x * 100) / 100;
      const transactions = tx.length ? { count: tx.length, p50Ms: r2(tx[Math.floor(tx.length / 2)]), maxMs: r2(tx[tx.length - 1]), totalMs: r2(tx.reduce((a, b) => a + b, 0)) } : { count: 0 };
      return { calls, transactions };
    }
    case 'profile-start': {
      const { Session } = await import('node:inspector');
      session = new Session();
      session.connect();
      await post('Profiler.enable');
      await post('Profiler.setSamplingInterval', { interval: msg.intervalUs ?? 250 });
      await post('Profiler.start');
      return {};
    }
    case 'profile-stop': {
      const { profile } = await post('Profiler.stop');
      writeFileSync(msg.file, JSON.stringify(profile));
      session.disconnect();
      session = undefined;
      return { file: msg.file };
    }
    default:
      return { error: `unknown probe request ${msg.bench}` };
  }
}

process.on('message', (msg) => {
  if (!msg || typeof msg.bench !== 'string') return;
  handle(msg).then(
    (res) => process.send?.({ benchReply: msg.id, ...res }),
    (err) => process.send?.({ benchReply: msg.id, error: String(err?.stack ?? err) }),
  );
});
