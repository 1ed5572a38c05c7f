// Shared by the single-purpose bench scripts (media, rerank, usage-overhead): their `--name value` options,
// a canned upstream run from a module source in its own process, and the real daemon (dist/) on a temp home.
import { fork, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const ENTRY = join(ROOT, 'dist/daemon/entry.js');
const { deriveCliToken } = await import(pathToFileURL(join(ROOT, 'dist/shared/cli-token.js')).href);
/** The Node flags `router start` gives the daemon (absent in older builds), so the daemon runs as shipped. */
export const DAEMON_NODE_FLAGS = await import(pathToFileURL(join(ROOT, 'dist/shared/daemon-flags.js')).href).then(
  (m) => m.DAEMON_NODE_FLAGS,
  () => [],
);

const args = process.argv.slice(2);

/** A numeric `--name value` option of the script, else `def`. */
export function opt(name, def) {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? Number(args[i + 1]) : def;
}

/** Runs a canned upstream (an ES module source that listens and sends `{port}` over IPC) in its own process. */
export function startMock(source) {
  const child = spawn(process.execPath, ['--input-type=module', '-e', source], { stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
  return new Promise((resolve) => child.once('message', (m) => resolve({ port: m.port, stop: () => child.kill() })));
}

/**
 * Starts the daemon on a temp home and port 0; `manage(method, path, body)` calls it with the CLI token;
 * `stop()` shuts it down and removes the home.
 */
export async function startDaemon({ name, env = { ...process.env }, execArgv = DAEMON_NODE_FLAGS } = {}) {
  const home = mkdtempSync(join(tmpdir(), `router-bench-${name}-`));
  const child = fork(ENTRY, ['--home', home, '--host', '127.0.0.1', '--port', '0'], {
    env: { ...env, ROUTER_START_NONCE: 'bench' },
    execArgv,
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
  });
  const msg = await new Promise((resolve, reject) => {
    child.once('message', resolve);
    child.once('exit', (code) => reject(new Error(`daemon exited with ${code}`)));
  });
  if (msg.type !== 'ready') throw new Error(`daemon did not start: ${JSON.stringify(msg)}`);
  child.disconnect();
  const cli = deriveCliToken(join(home, 'cli-token.salt'));
  const manage = async (method, path, body) => {
    const r = await fetch(`${msg.url}${path}`, {
      method,
      headers: { 'x-router-cli-token': cli, 'content-type': 'application/json' },
      body: body ? JSON.stringify(body) : undefined,
    });
    return r.json();
  };
  return {
    url: msg.url,
    manage,
    home,
    pid: child.pid,
    async stop() {
      await manage('POST', '/api/system/shutdown').catch(() => child.kill('SIGTERM'));
      await new Promise((r) => (child.exitCode !== null ? r() : child.once('exit', r)));
      rmSync(home, { recursive: true, force: true });
    },
  };
}
