/**
 * Doctor's agent check: every coding agent whose settings router wrote (a `router setup` or `router
 * config-tool` backup names its config home) or that names this router's port, still pointing at router,
 * reaching it at that address, with a key router accepts.
 */
import { readFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { backupEntries } from '../../shared/agent-tools/backup.js';
import { readToolSettings, TOOLS, type ToolDef } from '../../shared/agent-tools/tools.js';
import type { DoctorFinding } from '../../shared/doctor.js';
import type { Services } from '../services.js';

/** Longest wait for one agent's address to answer. */
const PROBE_TIMEOUT_MS = 3000;
const LOOPBACK = new Set(['127.0.0.1', 'localhost', '[::1]', '::1']);

async function readText(path: string): Promise<string | null> {
  try {
    return await readFile(path, 'utf8');
  } catch {
    return null;
  }
}

/** True when `url` names this daemon: a loopback host (or the listen host) and the listen port. */
export function pointsAt(url: string, listen: { host: string; port: number }): boolean {
  try {
    const u = new URL(url);
    const port = Number(u.port || (u.protocol === 'https:' ? 443 : 80));
    return port === listen.port && (LOOPBACK.has(u.hostname) || u.hostname === listen.host);
  } catch {
    return false;
  }
}

/** Asks the agent's address for the model list with the agent's key, as the agent itself would connect. */
async function probe(baseUrl: string, key: string): Promise<{ status: number } | { error: string }> {
  try {
    const res = await fetch(`${baseUrl}/v1/models`, { headers: { authorization: `Bearer ${key}` }, signal: AbortSignal.timeout(PROBE_TIMEOUT_MS) });
    await res.body?.cancel();
    return { status: res.status };
  } catch (err) {
    const cause = (err as { cause?: { code?: string } }).cause?.code;
    return { error: cause ?? ((err as Error).name === 'TimeoutError' ? 'no answer' : 'connection failed') };
  }
}

/** One agent config home's finding, or undefined when the agent is not set up for router there. */
async function checkTool(services: Services, tool: ToolDef, configHome: string, byRouter: boolean): Promise<DoctorFinding | undefined> {
  const files = await Promise.all(tool.files({ configHome, env: process.env }).map(async (path) => ({ path, text: await readText(path) })));
  const settings = readToolSettings(tool, files);
  const here = settings.baseUrl !== undefined && pointsAt(settings.baseUrl, services.listen);
  if (!byRouter && !here) return undefined;
  const subject = `${tool.name} (${files.map((f) => f.path).join(', ')})`;
  const fix = `run \`router setup\` (or \`router config-tool ${tool.id}\`) to point ${tool.name} at router again`;
  const fail = (message: string, f = fix): DoctorFinding => ({ check: 'agent', subject, status: 'fail', message, fix: f });
  if (!settings.baseUrl) return fail(`${tool.name} no longer points at router: its settings have no router address`);
  if (!here) return fail(`${tool.name} points at ${settings.baseUrl}, not at router (${services.listen.url})`);
  if (!settings.key) return fail(`${tool.name}'s settings hold no router API key`);
  const key = services.keys.verify(settings.key);
  if (!key) return fail(`the API key in ${tool.name}'s settings is not one of router's keys (removed?)`);
  if (!key.isActive) return fail(`the API key ${key.id} ('${key.name}') in ${tool.name}'s settings is disabled`, `enable it on the Keys page, or run \`router setup\` for a new one`);
  const answer = await probe(settings.baseUrl, settings.key);
  if ('error' in answer) return fail(`router does not answer at ${settings.baseUrl}, the address ${tool.name} uses (${answer.error})`, 'check the host and port router listens on (`router status`) and restart it there');
  if (answer.status !== 200) return fail(`router refused ${tool.name}'s key at ${settings.baseUrl} (HTTP ${answer.status})`);
  return { check: 'agent', subject, status: 'pass', message: `${tool.name} points at ${settings.baseUrl} with key ${key.id} ('${key.name}')` };
}

/** Findings for every agent router configured or that names router's address. */
export async function agentFindings(services: Services): Promise<DoctorFinding[]> {
  const jobs: Array<Promise<DoctorFinding | undefined>> = [];
  const home = homedir();
  for (const tool of TOOLS) {
    const homes = new Set(backupEntries(services.paths.home, tool.id).map((e) => e.configHome));
    jobs.push(checkTool(services, tool, home, homes.has(home)));
    for (const h of homes) if (h !== home) jobs.push(checkTool(services, tool, h, true));
  }
  return (await Promise.all(jobs)).filter((f): f is DoctorFinding => f !== undefined);
}
