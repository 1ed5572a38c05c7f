#!/usr/bin/env node
// The request-path guard (issue 33 item 4): this checkout's build against another commit's, before a change
// to the request path lands. Not a test: it prints figures for a person to read and write down.
//
//   npm run bench -- --compare <ref> [--rounds 3] [--ms 3000] [--kinds nonstream,stream] [--docs "label"]
//   node bench/guard.mjs --compare <ref> ...        (the same, without rebuilding this checkout first)
//
// <ref> is anything git names (main, HEAD~3, a tag, a hash). The ref is checked out into a worktree under the
// system temp folder (kept and reused by hash: a second run does not rebuild it), node_modules linked to this
// checkout's, and built. Then bench/compare.mjs runs each kind twice, once with the ref as A and once as B,
// so an order effect shows as disagreement between the two runs instead of hiding in one figure. Printed per
// kind: CPU per request, idle RSS and peak RSS under load, new / ref, in both orders. --docs "label" appends
// one row per kind to the "Request-path guard" table of docs/performance.md.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const args = process.argv.slice(2);
const arg = (n, d) => {
  const i = args.indexOf(`--${n}`);
  return i >= 0 && i + 1 < args.length ? args[i + 1] : d;
};
const ref = arg('compare');
if (!ref) {
  process.stderr.write('usage: npm run bench -- --compare <ref> [--rounds 3] [--ms 3000] [--kinds nonstream,stream] [--docs "label"]\n');
  process.exit(2);
}
const rounds = arg('rounds', '3');
const ms = arg('ms', '3000');
const kinds = arg('kinds', 'nonstream,stream').split(',');
const git = (...a) => execFileSync('git', a, { cwd: ROOT, encoding: 'utf8' }).trim();

let hash;
try {
  hash = git('rev-parse', '--verify', `${ref}^{commit}`);
} catch {
  process.stderr.write(`bench: git does not know '${ref}'\n`);
  process.exit(2);
}
const head = git('rev-parse', '--short', 'HEAD');
const dirty = git('status', '--porcelain', '--untracked-files=no') !== '';
const refDir = join(os.tmpdir(), `router-guard-${hash.slice(0, 12)}`);

/** The ref's checkout with dist/ built (made once per hash). */
function prepareRef() {
  if (existsSync(join(refDir, 'dist/daemon/entry.js'))) return;
  if (existsSync(refDir)) {
    spawnSync('git', ['worktree', 'remove', '--force', refDir], { cwd: ROOT });
    rmSync(refDir, { recursive: true, force: true });
  }
  process.stderr.write(`bench: checking out ${ref} (${hash.slice(0, 12)}) into ${refDir}\n`);
  git('worktree', 'add', '--quiet', '--detach', refDir, hash);
  symlinkSync(join(ROOT, 'node_modules'), join(refDir, 'node_modules'));
  process.stderr.write(`bench: building ${ref}\n`);
  const built = spawnSync('npm', ['run', 'build'], { cwd: refDir, stdio: ['ignore', 'ignore', 'inherit'] });
  if (built.status !== 0) {
    process.stderr.write(`bench: the build of ${ref} failed\n`);
    process.exit(1);
  }
}

/** One compare.mjs run; returns its JSON summary. */
function compare(kind, a, b) {
  const tmp = mkdtempSync(join(os.tmpdir(), 'router-guard-out-'));
  const file = join(tmp, 'summary.json');
  const run = spawnSync(process.execPath, [join(ROOT, 'bench/compare.mjs'), '--a', a, '--b', b, '--kind', kind, '--rounds', rounds, '--ms', ms, '--json', file], {
    cwd: ROOT,
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  if (run.status !== 0) {
    process.stderr.write(`bench: compare.mjs failed for ${kind}\n`);
    process.exit(1);
  }
  const out = JSON.parse(readFileSync(file, 'utf8'));
  rmSync(tmp, { recursive: true, force: true });
  return out;
}

if (!existsSync(join(ROOT, 'dist/daemon/entry.js'))) {
  process.stderr.write('bench: this checkout has no dist/: run `npm run build` (npm run bench does it)\n');
  process.exit(1);
}
prepareRef();

const ratio = (n, d) => (n && d ? n / d : null);
const fmt = (r) => (r === null ? '?' : `${r.toFixed(2)}x`);
const rows = [];
for (const kind of kinds) {
  // Order 1: ref is A, this build is B. Order 2: this build is A, the ref is B.
  const o1 = compare(kind, refDir, ROOT);
  const o2 = compare(kind, ROOT, refDir);
  const cpu = [ratio(o1.B.cpuUsPerReq, o1.A.cpuUsPerReq), ratio(o2.A.cpuUsPerReq, o2.B.cpuUsPerReq)];
  const idle = [ratio(o1.B.idleRssMb, o1.A.idleRssMb), ratio(o2.A.idleRssMb, o2.B.idleRssMb)];
  const peak = [ratio(o1.B.peakRssMb, o1.A.peakRssMb), ratio(o2.A.peakRssMb, o2.B.peakRssMb)];
  rows.push({
    kind,
    cpu,
    idle,
    peak,
    newCpu: [o1.B.cpuUsPerReq, o2.A.cpuUsPerReq],
    refCpu: [o1.A.cpuUsPerReq, o2.B.cpuUsPerReq],
    newIdle: [o1.B.idleRssMb, o2.A.idleRssMb],
    newPeak: [o1.B.peakRssMb, o2.A.peakRssMb],
    otherCores: Math.max(o1.A.otherCores, o1.B.otherCores, o2.A.otherCores, o2.B.otherCores),
  });
}

const label = `${head}${dirty ? '+changes' : ''} vs ${ref} (${hash.slice(0, 7)})`;
const lines = [
  `| kind | CPU per request, new / ref (both orders) | idle RSS, new / ref | peak RSS, new / ref | new: µs per request; idle / peak MB | other load (cores) |`,
  '|---|---|---|---|---|---|',
  ...rows.map(
    (r) =>
      `| ${r.kind} | ${fmt(r.cpu[0])}, ${fmt(r.cpu[1])} | ${fmt(r.idle[0])}, ${fmt(r.idle[1])} | ${fmt(r.peak[0])}, ${fmt(r.peak[1])} | ` +
      `${r.newCpu.join(', ')} (ref ${r.refCpu.join(', ')}); ${r.newIdle.join(', ')} / ${r.newPeak.join(', ')} | ${r.otherCores} |`,
  ),
];
process.stdout.write(`\nrequest-path guard: ${label}, ${rounds} rounds of ${ms} ms per build and order\n${lines.join('\n')}\n`);
process.stdout.write(
  '\nRead it: a ratio above 1 in both orders is a cost; one order above and the other below is noise. With other load above ~0.5 cores,\n' +
    'rerun on a quieter machine before writing the figure down (docs/performance.md "Request-path guard").\n',
);

const docsLabel = arg('docs');
if (docsLabel) {
  const docs = join(ROOT, 'docs/performance.md');
  const text = readFileSync(docs, 'utf8');
  const marker = '<!-- guard rows: bench/guard.mjs --docs appends here -->';
  if (!text.includes(marker)) {
    process.stderr.write('bench: docs/performance.md has no guard table marker; not written\n');
    process.exit(1);
  }
  const date = new Date().toISOString().slice(0, 10);
  const add = rows
    .map((r) => `| ${date} | ${docsLabel} | ${label} | ${r.kind} | ${fmt(r.cpu[0])}, ${fmt(r.cpu[1])} | ${fmt(r.idle[0])}, ${fmt(r.idle[1])} | ${fmt(r.peak[0])}, ${fmt(r.peak[1])} | ${r.otherCores} |`)
    .join('\n');
  writeFileSync(docs, text.replace(marker, `${add}\n${marker}`));
  process.stderr.write('bench: rows added to docs/performance.md\n');
}
