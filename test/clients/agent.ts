/**
 * Running one agent for one case: a fresh workspace holding the marker file, the mock scripted to play the
 * model, the agent spawned with only the environment it needs, and what came out of it.
 */
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { execa } from 'execa';
import { agentHandler, type AgentScript } from './agent-mock.js';
import { CLIENTS, ensureClient, type ClientName } from './install.js';
import type { RecordedRequest, World } from './world.js';
import type { MockRequest } from '../mocks/types.js';
import { strictUpstream } from '../mocks/strict.js';

export interface AgentRun {
  exitCode: number;
  stdout: string;
  stderr: string;
  /** What the agent sent to router (through the recorder). */
  sent: RecordedRequest[];
  /** What router sent to the mock upstream. */
  upstream: MockRequest[];
  script: AgentScript;
  workdir: string;
}

export interface Workspace {
  /** Holds both; removed after the case. */
  root: string;
  /** The agent's HOME (its own settings live there). */
  home: string;
  /** The folder the agent runs in; holds marker.txt. */
  workdir: string;
}

/** A new HOME and workspace for one agent case. */
export function newWorkspace(client: ClientName): Workspace & { script: AgentScript } {
  const root = mkdtempSync(join(tmpdir(), `router-${client}-`));
  const home = join(root, 'home');
  const workdir = join(root, 'work');
  mkdirSync(join(home, '.tmp'), { recursive: true });
  mkdirSync(workdir, { recursive: true });
  const marker = `MARKER-${client}-${randomBytes(6).toString('hex')}`;
  const file = join(workdir, 'marker.txt');
  writeFileSync(file, `${marker}\n`);
  return { root, home, workdir, script: { file, marker, calls: [] } };
}

/** The environment every agent gets: a PATH, its own HOME and temp folder, no terminal, nothing from ours. */
export function baseEnv(home: string): Record<string, string> {
  return {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: home,
    USER: process.env.USER ?? 'user',
    TERM: 'dumb',
    NO_COLOR: '1',
    CI: '1',
    LANG: 'C.UTF-8',
    // Inside the case's folder, so crash reports and the like go with it.
    TMPDIR: join(home, '.tmp'),
    // Any package install an agent attempts at run time fails at once instead of reaching a registry.
    npm_config_registry: 'http://127.0.0.1:9/',
    BUN_CONFIG_REGISTRY: 'http://127.0.0.1:9/',
  };
}

/** Spawns the agent with the mock playing the model; collects its output and every request on the way. */
export async function runAgent(
  world: World,
  client: ClientName,
  ws: Workspace & { script: AgentScript },
  args: string[],
  env: Record<string, string>,
  timeoutMs = 120_000,
): Promise<AgentRun> {
  const { command, args: pre } = await ensureClient(CLIENTS[client]);
  world.mock.reset();
  world.take();
  world.mock.handle(agentHandler(ws.script));
  // Asked first: what the real APIs would refuse is refused here too.
  world.mock.handle(strictUpstream());
  const r = await execa(command, [...pre, ...args], {
    cwd: ws.workdir,
    env,
    extendEnv: false,
    reject: false,
    stdin: 'ignore',
    timeout: timeoutMs,
    all: false,
  });
  return {
    exitCode: r.exitCode ?? -1,
    stdout: String(r.stdout ?? ''),
    stderr: String(r.stderr ?? '') + (r.timedOut ? `\n[timed out after ${timeoutMs} ms]` : ''),
    sent: world.take(),
    upstream: world.mock.requests.slice(),
    script: ws.script,
    workdir: ws.workdir,
  };
}

/** A one-line-per-request summary for assertion messages. */
export function describeRun(run: AgentRun): string {
  const sent = run.sent.map((s) => `  -> ${s.method} ${s.url} ${s.status ?? '?'} (${s.body.length} B)`).join('\n');
  const up = run.upstream.map((u) => `  => ${u.endpoint} ${u.model ?? ''} (${u.body.length} B)`).join('\n');
  return `exit ${run.exitCode}\n--- stdout ---\n${run.stdout.slice(-3000)}\n--- stderr ---\n${run.stderr.slice(-3000)}\n--- to router ---\n${sent}\n--- upstream ---\n${up}\n--- tool calls --- ${JSON.stringify(run.script.calls)}`;
}
