// In-repo load generator on undici (its own process; jobs arrive over IPC, results go back the same way).
// Requests go through Pool.dispatch with a minimal handler: no body streams, no parsing beyond counting,
// so the generator spends as little of the shared CPU as possible.
//
// Jobs:
//   throughput  closed loop: `connections` workers, each sends its next request when the last one ended.
//   rate        open loop at `rate` req/s; latency measured from the dispatch call to the last byte, and
//               first byte (for streams).
//   streams     opens `count` long streams (ramped), reports {type:'progress', open} when all delivered
//               their first byte, holds them `holdMs`, then aborts them all.
import { Pool } from 'undici';

const now = () => performance.now();

function percentiles(values) {
  if (values.length === 0) return { p50: null, p90: null, p99: null, max: null, mean: null, n: 0 };
  const a = Float64Array.from(values).sort();
  const at = (p) => a[Math.min(a.length - 1, Math.max(0, Math.ceil((p / 100) * a.length) - 1))];
  const r = (x) => Math.round(x * 1000) / 1000;
  let sum = 0;
  for (const x of a) sum += x;
  return { p50: r(at(50)), p90: r(at(90)), p99: r(at(99)), max: r(a[a.length - 1]), mean: r(sum / a.length), n: a.length };
}

function makePool(job) {
  return new Pool(job.origin, {
    connections: job.connections,
    pipelining: 1,
    keepAliveTimeout: 60_000,
    headersTimeout: 60_000,
    bodyTimeout: 60_000,
  });
}

/** One request; `done(err, r)` with r = {status, tFirst, tEnd, bytes, errBody}. */
function fire(pool, job, done, onStart) {
  let status = 0;
  let tFirst = 0;
  let bytes = 0;
  let errBody = '';
  pool.dispatch(
    { path: job.path, method: 'POST', headers: job.headers, body: job.body },
    {
      onRequestStart(controller) {
        onStart?.(controller);
      },
      onResponseStart(_c, statusCode) {
        status = statusCode;
      },
      onResponseData(_c, chunk) {
        if (tFirst === 0) tFirst = now();
        bytes += chunk.length;
        if (status >= 400 && errBody.length < 500) errBody += chunk.toString();
      },
      onResponseEnd() {
        done(null, { status, tFirst, tEnd: now(), bytes, errBody });
      },
      onResponseError(_c, err) {
        done(err, { status, tFirst, tEnd: now(), bytes, errBody });
      },
    },
  );
}

async function throughput(job) {
  const pool = makePool(job);
  const t0 = now();
  const tMeasure = t0 + job.warmupMs;
  const tEnd = tMeasure + job.durationMs;
  let ok = 0;
  let all = 0;
  let errors = 0;
  let bytes = 0;
  let lastError = '';
  const lat = [];
  const inflight = new Set();
  let stalled = 0;
  await new Promise((resolve) => {
    let running = job.connections;
    // A request still open 3 s after the phase ended is a stalled stream: abort it, count it, move on.
    const reaper = setTimeout(() => {
      for (const c of inflight) {
        stalled++;
        c.abort(new Error('stalled: still open 3 s after the phase ended'));
      }
    }, tEnd - now() + 3000);
    const worker = () => {
      const start = now();
      if (start >= tEnd) {
        if (--running === 0) {
          clearTimeout(reaper);
          resolve();
        }
        return;
      }
      let ctl;
      fire(pool, job, (err, r) => {
        inflight.delete(ctl);
        all++;
        if (start >= tMeasure && r.tEnd <= tEnd) {
          if (!err && r.status === 200) {
            ok++;
            bytes += r.bytes;
            if (lat.length < 200_000) lat.push(r.tEnd - start);
          } else {
            errors++;
            lastError = err ? String(err.message ?? err) : `HTTP ${r.status} ${r.errBody.slice(0, 200)}`;
          }
        }
        worker();
      }, (c) => inflight.add((ctl = c)));
    };
    for (let i = 0; i < job.connections; i++) worker();
  });
  await pool.close();
  const secs = job.durationMs / 1000;
  return { rps: Math.round(ok / secs), ok, all, errors, stalled, lastError, bytesPerSec: Math.round(bytes / secs), latencyMs: percentiles(lat) };
}

async function rate(job) {
  const pool = makePool(job);
  const interval = 1000 / job.rate;
  const total = Math.round(((job.warmupMs + job.durationMs) / 1000) * job.rate);
  const warm = Math.round((job.warmupMs / 1000) * job.rate);
  const lat = [];
  const first = [];
  let ok = 0;
  let errors = 0;
  let lastError = '';
  let sent = 0;
  let finished = 0;
  let maxLagMs = 0;
  let stalled = 0;
  const inflight = new Set();
  const t0 = now();
  const reaper = setTimeout(() => {
    for (const c of inflight) {
      stalled++;
      c.abort(new Error('stalled: still open 3 s after the phase ended'));
    }
  }, job.warmupMs + job.durationMs + 3000);
  await new Promise((resolve) => {
    const tick = () => {
      const t = now();
      while (sent < total && t0 + sent * interval <= t) {
        const measured = sent >= warm;
        maxLagMs = Math.max(maxLagMs, t - (t0 + sent * interval));
        sent++;
        const start = now();
        let ctl;
        fire(pool, job, (err, r) => {
          inflight.delete(ctl);
          finished++;
          if (measured) {
            if (!err && r.status === 200) {
              ok++;
              lat.push(r.tEnd - start);
              if (r.tFirst) first.push(r.tFirst - start);
            } else {
              errors++;
              lastError = err ? String(err.message ?? err) : `HTTP ${r.status} ${r.errBody.slice(0, 200)}`;
            }
          }
          if (finished === total) resolve();
        }, (c) => inflight.add((ctl = c)));
      }
      if (sent < total) setTimeout(tick, Math.max(0, Math.min(interval, t0 + sent * interval - now())));
    };
    tick();
  });
  clearTimeout(reaper);
  await pool.close();
  return { rate: job.rate, ok, errors, stalled, lastError, latencyMs: percentiles(lat), firstByteMs: percentiles(first), schedulerMaxLagMs: Math.round(maxLagMs * 100) / 100 };
}

async function streams(job) {
  const pool = makePool({ ...job, connections: job.count + 16 });
  const controllers = [];
  const first = [];
  let open = 0;
  let failed = 0;
  let lastError = '';
  let bytes = 0;
  let allOpenAt = 0;
  const t0 = now();
  let reported = false;
  const report = () => {
    if (reported || open + failed < job.count) return;
    reported = true;
    allOpenAt = now();
    process.send({ type: 'progress', id: job.id, open, failed, ms: Math.round(allOpenAt - t0) });
  };
  const launch = (i) => {
    const start = now();
    let gotFirst = false;
    pool.dispatch(
      { path: job.path, method: 'POST', headers: job.headers, body: job.body },
      {
        onRequestStart(c) {
          controllers.push(c);
        },
        onResponseStart(_c, status) {
          if (status !== 200) {
            failed++;
            lastError = `HTTP ${status}`;
            gotFirst = true;
            report();
          }
        },
        onResponseData(_c, chunk) {
          bytes += chunk.length;
          if (!gotFirst) {
            gotFirst = true;
            open++;
            first.push(now() - start);
            report();
          }
        },
        onResponseEnd() {},
        onResponseError(_c, err) {
          if (!gotFirst) {
            gotFirst = true;
            failed++;
            lastError = String(err.message ?? err);
            report();
          }
        },
      },
    );
  };
  const perStep = Math.ceil(job.count / Math.max(1, job.rampMs / 50));
  for (let i = 0; i < job.count; i += perStep) {
    for (let j = i; j < Math.min(job.count, i + perStep); j++) launch(j);
    await new Promise((r) => setTimeout(r, 50));
  }
  const deadline = now() + job.openTimeoutMs;
  while (!reported && now() < deadline) await new Promise((r) => setTimeout(r, 50));
  if (!reported) {
    reported = true;
    process.send({ type: 'progress', id: job.id, open, failed, ms: Math.round(now() - t0), timedOut: true });
  }
  const bytesAtHold = bytes;
  const tHold = now();
  await new Promise((r) => setTimeout(r, job.holdMs));
  const holdBytes = bytes - bytesAtHold;
  const holdSecs = (now() - tHold) / 1000;
  for (const c of controllers) {
    try {
      c.abort(new Error('benchmark done'));
    } catch {
      // already finished
    }
  }
  await pool.destroy().catch(() => {});
  return { requested: job.count, open, failed, lastError, firstByteMs: percentiles(first), openAllMs: allOpenAt ? Math.round(allOpenAt - t0) : null, holdBytesPerSec: Math.round(holdBytes / holdSecs) };
}

const jobs = { throughput, rate, streams };

process.on('message', async (job) => {
  if (!job || !jobs[job.kind]) return;
  try {
    const body = job.body;
    job.body = typeof body === 'string' ? Buffer.from(body) : body;
    const result = await jobs[job.kind](job);
    process.send({ type: 'result', id: job.id, result });
  } catch (err) {
    process.send({ type: 'result', id: job.id, error: String(err?.stack ?? err) });
  }
});
process.on('disconnect', () => process.exit(0));
process.send({ type: 'ready' });
