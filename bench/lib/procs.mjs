// Process helpers for the harness: spawning IPC children, request/reply over IPC, RSS and CPU accounting.
import { spawn, execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import net from 'node:net';

/** Spawns `node ...args` with an IPC channel; resolves with the child and its first matching message. */
export function spawnNode(args, { env, readyType = 'ready', timeoutMs = 20_000, name = args[args.length - 1] } = {}) {
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'ignore', 'pipe', 'ipc'], env: { ...process.env, ...env }, serialization: 'json' });
  let stderr = '';
  child.stderr.on('data', (d) => {
    stderr = (stderr + d.toString()).slice(-4000);
  });
  const ready = new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${name} did not report ready in ${timeoutMs} ms\n${stderr}`)), timeoutMs);
    const onMsg = (m) => {
      if (m?.type === readyType || m?.type === 'error') {
        clearTimeout(timer);
        child.off('message', onMsg);
        if (m.type === 'error') reject(new Error(`${name}: ${m.message}`));
        else resolve(m);
      }
    };
    child.on('message', onMsg);
    child.once('exit', (code, sig) => {
      clearTimeout(timer);
      reject(new Error(`${name} exited (${sig ?? code}) before ready\n${stderr}`));
    });
  });
  return { child, ready, stderr: () => stderr };
}

let nextId = 1;

/** Sends a job to a child and waits for {type:'result', id} (loadgen) or {benchReply: id} (probe, mock). */
export function ask(child, msg, { onProgress, timeoutMs = 600_000 } = {}) {
  const id = nextId++;
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => done(new Error(`no reply to ${msg.kind ?? msg.bench} in ${timeoutMs} ms`)), timeoutMs);
    const onMsg = (m) => {
      if (m?.type === 'progress' && m.id === id) return onProgress?.(m);
      if ((m?.type === 'result' && m.id === id) || m?.benchReply === id) {
        if (m.error) done(new Error(m.error));
        else done(null, m.result ?? m);
      }
    };
    const onExit = () => done(new Error(`child exited while waiting for ${msg.kind ?? msg.bench}`));
    function done(err, v) {
      clearTimeout(timer);
      child.off('message', onMsg);
      child.off('exit', onExit);
      if (err) reject(err);
      else resolve(v);
    }
    child.on('message', onMsg);
    child.once('exit', onExit);
    child.send({ ...msg, id });
  });
}

/** Resident set size of a process in bytes (Linux /proc; `ps` elsewhere). */
export function rssOf(pid) {
  try {
    const m = /VmRSS:\s+(\d+)\s+kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    if (m) return Number(m[1]) * 1024;
  } catch {
    // not Linux
  }
  try {
    return Number(execFileSync('ps', ['-o', 'rss=', '-p', String(pid)]).toString().trim()) * 1024;
  } catch {
    return null;
  }
}

const TICK_MS = 10; // USER_HZ is 100 on every mainstream Linux

/** CPU time (ms) a process has used so far, or null off Linux. */
export function cpuMsOf(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(f[11]) + Number(f[12])) * TICK_MS;
  } catch {
    return null;
  }
}

/** Whole-machine CPU (ms, summed over cores): {busy, total}, or null off Linux. */
export function systemCpu() {
  try {
    const line = readFileSync('/proc/stat', 'utf8').split('\n')[0];
    const v = line.trim().split(/\s+/).slice(1).map(Number);
    const [user, nice, system, idle, iowait, irq, softirq, steal] = v;
    const busy = user + nice + system + irq + softirq + (steal ?? 0);
    return { busy: busy * TICK_MS, total: (busy + idle + iowait) * TICK_MS };
  } catch {
    return null;
  }
}

/**
 * CPU accounting around a measured phase: how much CPU each of our processes used, and how much went to
 * everything else on the machine (other engineers' tests), expressed in cores.
 */
export function cpuMeter(pids) {
  const t0 = performance.now();
  const sys0 = systemCpu();
  const p0 = Object.fromEntries(Object.entries(pids).map(([k, pid]) => [k, cpuMsOf(pid)]));
  return () => {
    const wall = performance.now() - t0;
    const sys1 = systemCpu();
    const out = { wallMs: Math.round(wall), procCores: {} };
    let ours = 0;
    for (const [k, pid] of Object.entries(pids)) {
      const c1 = cpuMsOf(pid);
      if (c1 === null || p0[k] === null) continue;
      out.procCores[k] = Math.round(((c1 - p0[k]) / wall) * 100) / 100;
      out[`${k}CpuMs`] = c1 - p0[k];
      ours += c1 - p0[k];
    }
    if (sys0 && sys1) {
      const busy = sys1.busy - sys0.busy;
      out.machineBusyCores = Math.round((busy / wall) * 100) / 100;
      out.otherCores = Math.round((Math.max(0, busy - ours) / wall) * 100) / 100;
    }
    return out;
  };
}

/** A free TCP port on loopback. */
export function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

/** Runs a command to completion; resolves {code, ms, stdout, stderr}. */
export function timed(cmd, args, { env, timeoutMs = 60_000 } = {}) {
  return new Promise((resolve) => {
    const t0 = performance.now();
    const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, ms: performance.now() - t0, stdout, stderr });
    });
  });
}

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

export function median(xs) {
  const a = xs.filter((x) => typeof x === 'number').sort((x, y) => x - y);
  if (!a.length) return null;
  const m = Math.floor(a.length / 2);
  return a.length % 2 ? a[m] : (a[m - 1] + a[m]) / 2;
}
