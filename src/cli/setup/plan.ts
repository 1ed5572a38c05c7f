/**
 * What `router setup` finds and would change: the coding agents on this machine (the daemon's AgentBridge),
 * the logins the CLIs hold (the keychain two-step discovery) and the provider keys in the environment;
 * for each, whether it is already in place. Nothing here changes anything.
 */
import { homedir } from 'node:os';
import { execa } from 'execa';
import type { ApiKeyRecord } from '../../shared/wire.js';
import type { DiscoveredAccount, DiscoverReply, EnvCredential, EnvImportReply, EnvImportResult } from '../../shared/imports.js';
import { readOrNull } from '../../shared/agent-tools/backup.js';
import { readToolSettings } from '../../shared/agent-tools/tools.js';
import type { DaemonClient } from '../client.js';
import { setupAgent, type SetupAgent } from './agents.js';
import { envCredentials } from './env.js';

/** The parts of `GET /api/tools/agent-bridge/state` setup reads. */
interface BridgeAgent {
  id: string;
  name: string;
  installed: boolean;
  path: string | null;
  version: string | null;
}

export interface AgentPlan {
  id: string;
  name: string;
  version: string | null;
  path: string;
  /** `configure`: write its settings; `unchanged`: they point at router with a key that works; `unsupported`: setup cannot configure it. */
  action: 'configure' | 'unchanged' | 'unsupported';
  spec?: SetupAgent;
  files: string[];
  /** The key its settings hold now (unchanged agents). */
  key?: string;
  keyId?: string;
}

export interface LoginPlan {
  account: DiscoveredAccount;
  action: 'import' | 'unchanged' | 'unsupported';
}

export interface SetupPlan {
  url: string;
  agents: AgentPlan[];
  logins: LoginPlan[];
  env: Array<{ credential: EnvCredential; action: EnvImportResult['action'] }>;
  /** True when applying would change something (and so needs a confirmation). */
  changes: boolean;
}

/** The config folder setup writes agents' settings in: the user's home, as the agents read them. */
export const configHome = () => homedir();

/** `rk_abcdef...wxyz`, the key store's mask, to find a key's id from the key itself. */
const maskOf = (key: string) => `${key.slice(0, 7)}...${key.slice(-4)}`;

/** True when `baseUrl` reaches router at `url` and router takes `key` there. */
async function keyWorks(baseUrl: string, key: string): Promise<boolean> {
  try {
    const res = await fetch(`${baseUrl}/v1/models`, { headers: { authorization: `Bearer ${key}` }, signal: AbortSignal.timeout(5000) });
    await res.body?.cancel();
    return res.status === 200;
  } catch {
    return false;
  }
}

function sameAddress(a: string, b: string): boolean {
  try {
    const x = new URL(a);
    const y = new URL(b);
    const loop = (h: string) => (['localhost', '127.0.0.1', '[::1]'].includes(h) ? 'loopback' : h);
    return loop(x.hostname) === loop(y.hostname) && x.port === y.port;
  } catch {
    return false;
  }
}

/**
 * The version an agent prints, asked again when AgentBridge had none: the bridge waits a few seconds (the
 * dashboard must not hang on a stuck binary), and an agent's first start on a busy machine takes longer
 * (Cline's `--version` took over 30 s with seven agents starting at once on two loaded cores).
 */
async function versionOf(a: BridgeAgent): Promise<string | null> {
  if (a.version) return a.version;
  const r = await execa(a.path!, ['--version'], { reject: false, stdin: 'ignore', timeout: 60_000, killSignal: 'SIGKILL' });
  return /\d+\.\d+\.\d+(?:[-+][\w.]+)?/.exec(`${r.stdout}\n${r.stderr}`)?.[0] ?? null;
}

async function planAgent(a: BridgeAgent, url: string, keys: ApiKeyRecord[]): Promise<AgentPlan> {
  const spec = setupAgent(a.id);
  const base = { id: a.id, name: a.name, version: await versionOf(a), path: a.path! };
  if (!spec) return { ...base, action: 'unsupported', files: [] };
  const files = spec.tool.files({ configHome: configHome(), env: process.env });
  const settings = readToolSettings(spec.tool, files.map((path) => ({ path, text: readOrNull(path) })));
  if (settings.baseUrl && settings.key && sameAddress(settings.baseUrl, url) && (await keyWorks(url, settings.key))) {
    const keyId = keys.find((k) => k.maskedKey === maskOf(settings.key!))?.id;
    if (keyId) return { ...base, action: 'unchanged', spec, files, key: settings.key, keyId };
  }
  return { ...base, action: 'configure', spec, files };
}

/** Finds everything and says what applying would do. */
export async function makePlan(client: DaemonClient, url: string): Promise<SetupPlan> {
  const env = envCredentials(process.env);
  const [bridge, discovered, connections, keys, envDry] = await Promise.all([
    client.request<{ agents: BridgeAgent[] }>('GET', '/api/tools/agent-bridge/state', undefined, 60_000),
    client.request<DiscoverReply>('POST', '/api/providers/keychain/discover', undefined, 60_000),
    client.request<{ connections: Array<{ providerSpecificData: Record<string, unknown> }> }>('GET', '/api/providers'),
    client.call('GET /api/keys'),
    env.length ? client.request<EnvImportReply>('POST', '/api/providers/env/import', { credentials: env, dryRun: true }) : Promise.resolve({ results: [] }),
  ]);
  const imported = new Set(connections.connections.map((c) => c.providerSpecificData.importedFrom));
  const agents = await Promise.all(bridge.agents.filter((a) => a.installed && a.path).map((a) => planAgent(a, url, keys.keys)));
  const logins = discovered.accounts.map((account): LoginPlan => ({
    account,
    action: !account.importable ? 'unsupported' : imported.has(`${account.service}:${account.account}`) ? 'unchanged' : 'import',
  }));
  const envPlan = env.map((credential, i) => ({ credential, action: envDry.results[i]?.action ?? 'unsupported' }));
  const changes = agents.some((a) => a.action === 'configure') || logins.some((l) => l.action === 'import') || envPlan.some((e) => e.action === 'created' || e.action === 'updated');
  return { url, agents, logins, env: envPlan, changes };
}
