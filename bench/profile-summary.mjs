#!/usr/bin/env node
// Summarizes a V8 .cpuprofile (from `node --cpu-prof` or the harness's `--profile`): where the time goes by
// area (router code per file, h3/srvx, undici, Node internals, GC), the top functions by self time, and the
// router functions by inclusive time.   Usage: node bench/profile-summary.mjs <file.cpuprofile> [--top N]
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

function area(url, fn) {
  if (!url) return fn.startsWith('(') ? fn : `(native) ${fn}`;
  const nm = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (nm) return nm[1];
  if (url.includes('/dist/')) return `router ${url.slice(url.indexOf('/dist/') + 6)}`;
  if (url.startsWith('node:')) return 'node internals';
  if (url.includes('/bench/')) return 'bench probe';
  return url;
}

export function summarize(file, top = 25) {
  const prof = JSON.parse(readFileSync(file, 'utf8'));
  const byId = new Map();
  const parent = new Map();
  for (const n of prof.nodes) {
    byId.set(n.id, n);
    for (const c of n.children ?? []) parent.set(c, n.id);
  }
  const total = prof.endTime - prof.startTime; // µs
  const dt = new Map(); // node id -> µs
  for (let i = 0; i < prof.samples.length; i++) dt.set(prof.samples[i], (dt.get(prof.samples[i]) ?? 0) + (prof.timeDeltas[i] ?? 0));
  const key = (n) => {
    const cf = n.callFrame;
    const url = cf.url.replace(/^file:\/\//, '');
    const short = url.includes('node_modules/') ? url.slice(url.lastIndexOf('node_modules/') + 13) : url.includes('/dist/') ? url.slice(url.indexOf('/dist/') + 1) : url;
    return `${cf.functionName || '(anonymous)'} ${short}${short ? `:${cf.lineNumber + 1}` : ''}`;
  };
  const self = new Map();
  const incl = new Map();
  const areas = new Map();
  let idle = 0;
  // The probe's own profiler calls (Profiler.stop serializes the profile) are not the router's time.
  const probeNode = new Map();
  const isProbe = (id) => {
    if (id === undefined) return false;
    if (probeNode.has(id)) return probeNode.get(id);
    const v = byId.get(id).callFrame.url.includes('bench/lib/probe.mjs') || isProbe(parent.get(id));
    probeNode.set(id, v);
    return v;
  };
  let probeUs = 0;
  for (const [id, us] of dt) {
    if (isProbe(id)) {
      probeUs += us;
      continue;
    }
    const n = byId.get(id);
    const k = key(n);
    self.set(k, (self.get(k) ?? 0) + us);
    const a = area(n.callFrame.url.replace(/^file:\/\//, ''), n.callFrame.functionName);
    if (a === '(idle)') idle += us;
    areas.set(a, (areas.get(a) ?? 0) + us);
    const seen = new Set();
    for (let cur = id; cur !== undefined; cur = parent.get(cur)) {
      const ck = key(byId.get(cur));
      if (seen.has(ck)) continue;
      seen.add(ck);
      incl.set(ck, (incl.get(ck) ?? 0) + us);
    }
  }
  const busy = total - idle - probeUs;
  const pct = (us) => `${((us / busy) * 100).toFixed(1).padStart(5)}%`;
  const out = [];
  out.push(`profile ${file}: ${(total / 1000).toFixed(0)} ms wall, ${(busy / 1000).toFixed(0)} ms busy (${((busy / total) * 100).toFixed(0)}%); percentages are of busy time`);
  out.push('\nBy area (self time):');
  for (const [a, us] of [...areas].filter(([a]) => a !== '(idle)').sort((x, y) => y[1] - x[1]).slice(0, 20)) out.push(`  ${pct(us)}  ${a}`);
  out.push(`\nTop ${top} functions by self time:`);
  for (const [k, us] of [...self].filter(([k]) => !k.startsWith('(idle)')).sort((x, y) => y[1] - x[1]).slice(0, top)) out.push(`  ${pct(us)}  ${k}`);
  out.push(`\nRouter and h3/srvx functions by inclusive time:`);
  for (const [k, us] of [...incl].filter(([k]) => /^\S+ (dist\/|h3\/|srvx\/)/.test(k)).sort((x, y) => y[1] - x[1]).slice(0, top)) out.push(`  ${pct(us)}  ${k}`);
  return out.join('\n');
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const file = process.argv[2];
  if (!file) {
    process.stderr.write('usage: node bench/profile-summary.mjs <file.cpuprofile> [--top N]\n');
    process.exit(2);
  }
  const i = process.argv.indexOf('--top');
  process.stdout.write(`${summarize(file, i > 0 ? Number(process.argv[i + 1]) : 25)}\n`);
}
