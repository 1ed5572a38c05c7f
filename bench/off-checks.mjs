#!/usr/bin/env node
// What the request path pays for hedging, mid-stream recovery and context fit when a combo leaves them off
// (issue 30 "a bench figure: the hot-path cost ... when they are off"). Not a test.
//
//   npm run build && node bench/off-checks.mjs [--iterations 2000000] [--rounds 5]
//
// A daemon's services are booted in-process from dist/ on a temp home with one OpenAI connection and a
// one-target combo that leaves every wave-three field off. Each round times, in this thread's CPU time, the
// planner for the combo alone (`planTargets`, what every request runs anyway) and the planner followed by
// the exact checks the request path adds for the three features (execute.ts: `plan.combo?.contextFit`,
// `plan.combo?.hedgeAfterMs`, `plan.combo?.midStreamRecovery` in the attempt limits; chat.ts: the combo
// looked up again for a stream's `midStreamRecovery`). The difference per call is their cost; it is set
// beside router's ~210 µs of CPU per proxied request (docs/performance.md). CPU time, not wall time, so other
// load on the machine inflates both sides alike instead of adding noise to one.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const args = process.argv.slice(2);
const opt = (name, dflt) => (args.includes(`--${name}`) ? Number(args[args.indexOf(`--${name}`) + 1]) : dflt);
const N = opt('iterations', 2_000_000);
const ROUNDS = opt('rounds', 5);

const dist = new URL('../dist/daemon/', import.meta.url);
const { bootServices, closeServices } = await import(new URL('boot.js', dist).href);
const { planTargets } = await import(new URL('proxy/plan.js', dist).href);
const { Logger } = await import(new URL('logger.js', dist).href);

const home = mkdtempSync(join(tmpdir(), 'router-off-checks-'));
const services = await bootServices({ home, host: '127.0.0.1', port: 0, log: new Logger({}) });
await services.connections.create({ provider: 'openai', name: 'bench', authKind: 'api-key', credential: { apiKey: 'sk-bench' } });
await services.combos.create({
  name: 'bench',
  strategy: 'priority',
  models: [{ model: 'openai/gpt-4o-mini' }],
  targetTimeoutMs: null,
  affinity: 'off',
  hedgeAfterMs: null,
  midStreamRecovery: null,
  contextFit: false,
});
const combo = services.combos.byName('bench');
if (!combo || combo.hedgeAfterMs != null || combo.midStreamRecovery != null || combo.contextFit) throw new Error('the bench combo must leave every field off');

/** This thread's CPU time in ns (user + system). */
const cpuNs = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) * 1000;
};

let sink = 0;
function plannerOnly() {
  const t = cpuNs();
  for (let i = 0; i < N; i++) {
    const plan = planTargets(services, 'bench');
    sink += plan.targets.length;
  }
  return (cpuNs() - t) / N;
}
function plannerAndChecks() {
  const t = cpuNs();
  for (let i = 0; i < N; i++) {
    // chat.ts: a stream's combo looked up for midStreamRecovery === 'continue'.
    const continued = services.combos.byName('bench')?.midStreamRecovery === 'continue';
    const plan = planTargets(services, 'bench');
    // execute.ts: context fit, hedging, and the attempt limits' recovery mode.
    if (plan.combo?.contextFit) sink += 1;
    const hedgeMs = plan.combo?.hedgeAfterMs;
    if (hedgeMs != null && plan.targets.length > 1) sink += 1;
    const mode = plan.combo?.midStreamRecovery;
    if (mode || continued) sink += 1;
    sink += plan.targets.length;
  }
  return (cpuNs() - t) / N;
}

/** The checks alone, on one plan made beforehand: their own cost, without the planner's noise around it. */
const fixedPlan = planTargets(services, 'bench');
function checksAlone() {
  const t = cpuNs();
  for (let i = 0; i < N; i++) {
    const continued = services.combos.byName('bench')?.midStreamRecovery === 'continue';
    const plan = fixedPlan;
    if (plan.combo?.contextFit) sink += 1;
    const hedgeMs = plan.combo?.hedgeAfterMs;
    if (hedgeMs != null && plan.targets.length > 1) sink += 1;
    const mode = plan.combo?.midStreamRecovery;
    if (mode || continued) sink += 1;
  }
  return (cpuNs() - t) / N;
}

plannerOnly();
plannerAndChecks();
checksAlone();
const base = [];
const checked = [];
const alone = [];
for (let r = 0; r < ROUNDS; r++) {
  // Alternate the order so warm-up and neighbours fall on both sides.
  if (r % 2 === 0) {
    base.push(plannerOnly());
    checked.push(plannerAndChecks());
  } else {
    checked.push(plannerAndChecks());
    base.push(plannerOnly());
  }
  alone.push(checksAlone());
}
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const b = median(base);
const c = median(checked);
const added = c - b;
console.log(`iterations ${N} x ${ROUNDS} rounds (CPU time of this thread)`);
console.log(`planner only             ${b.toFixed(1)} ns per request (rounds: ${base.map((x) => x.toFixed(0)).join(', ')})`);
console.log(`planner + off checks     ${c.toFixed(1)} ns per request (rounds: ${checked.map((x) => x.toFixed(0)).join(', ')})`);
console.log(`difference               ${added.toFixed(1)} ns per request (within the rounds' spread when it is below it)`);
const own = median(alone);
console.log(`the off checks alone     ${own.toFixed(1)} ns per request = ${((own / 210_000) * 100).toFixed(4)} % of ~210 µs CPU per proxied request (rounds: ${alone.map((x) => x.toFixed(1)).join(', ')})`);
closeServices(services);
rmSync(home, { recursive: true, force: true });
if (sink === -1) console.log(sink);
