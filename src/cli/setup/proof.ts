/**
 * Proves an agent works through router: runs the agent's own binary once with a short prompt, in an empty
 * folder, and then asks the daemon's request log whether a request with the agent's key arrived and what
 * became of it. Exit status alone is not proof (an agent may answer from elsewhere); the log row is.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import type { LogEntry } from '../../shared/records.js';
import type { DaemonClient } from '../client.js';
import { query } from '../client.js';
import type { SetupAgent } from './agents.js';

export const PROOF_PROMPT = 'Reply with the single word OK.';
const PROOF_TIMEOUT_MS = 120_000;
/** How long the request log may take to show a finished request (usage rows are written behind). */
const LOG_WAIT_MS = 5_000;

export interface Proof {
  ok: boolean;
  /** Why it failed, in one line (the upstream's or the agent's own words). */
  reason?: string;
  fix?: string;
  /** A shell variable that would override router's settings in this shell (the proof ran without it). */
  warning?: string;
  /** The command that was run, as a person would type it. */
  command: string;
}

/** The last meaningful line of an agent's output, without the key. */
function lastWords(text: string, key: string): string {
  const lines = text.split('\n').map((l) => l.trim()).filter(Boolean);
  return (lines.slice(-2).join(' ') || 'no output').split(key).join('rk_***').slice(0, 300);
}

async function logRows(client: DaemonClient, keyId: string, from: string): Promise<LogEntry[]> {
  const deadline = Date.now() + LOG_WAIT_MS;
  for (;;) {
    const rows = (await client.request<{ logs: LogEntry[] }>('GET', `/api/logs${query({ key: keyId, from, limit: 20 })}`)).logs;
    if (rows.length > 0 || Date.now() > deadline) return rows;
    await new Promise((r) => setTimeout(r, 200));
  }
}

export async function prove(client: DaemonClient, agent: SetupAgent, binary: string, keyId: string, key: string, env: NodeJS.ProcessEnv): Promise<Proof> {
  const args = agent.proofArgs!(PROOF_PROMPT);
  const command = [agent.id === 'gemini-cli' ? 'gemini' : binary.split('/').pop()!, ...args.map((a) => (/\s/.test(a) ? `"${a}"` : a))].join(' ');
  const overridden = agent.overriddenBy.filter((v) => env[v]);
  const runEnv: NodeJS.ProcessEnv = { ...env, ...agent.proofEnv };
  for (const v of overridden) delete runEnv[v];
  const warning = overridden.length
    ? `your shell sets ${overridden.join(', ')}, which ${agent.tool.name} prefers over router's settings: unset ${overridden.length === 1 ? 'it' : 'them'} (router holds your key now)`
    : undefined;
  const dir = mkdtempSync(join(tmpdir(), 'router-setup-proof-'));
  const from = new Date(Date.now() - 1000).toISOString();
  try {
    const r = await execa(binary, args, { cwd: dir, env: runEnv, extendEnv: false, reject: false, stdin: 'ignore', timeout: PROOF_TIMEOUT_MS, killSignal: 'SIGKILL' });
    const rows = await logRows(client, keyId, from);
    const served = rows.find((row) => row.status < 400);
    const refused = rows.find((row) => row.status >= 400);
    const base = { command, ...(warning ? { warning } : {}) };
    if (r.timedOut) return { ...base, ok: false, reason: `no answer within ${PROOF_TIMEOUT_MS / 1000} s`, fix: `run \`${command}\` yourself to see where it waits` };
    if (r.exitCode === 0 && served) return { ...base, ok: true };
    if (refused) {
      return { ...base, ok: false, reason: `router answered ${refused.status}: ${refused.error ?? 'error'}`, fix: `check the ${refused.provider} account: \`router providers test ${refused.provider}\`, \`router doctor\`` };
    }
    if (rows.length === 0) {
      return { ...base, ok: false, reason: `no request reached router (${lastWords(`${r.stderr}\n${r.stdout}`, key)})`, fix: `run \`${command}\` yourself; \`router doctor\` checks its settings` };
    }
    return { ...base, ok: false, reason: `exit ${r.exitCode}: ${lastWords(`${r.stderr}\n${r.stdout}`, key)}`, fix: `run \`${command}\` yourself to see the whole error` };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
