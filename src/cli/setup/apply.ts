/**
 * Applies a confirmed setup plan: imports the credentials (each tested against its upstream), then for each
 * agent to configure picks a model from the accounts that work, creates its API key, backs its settings
 * up and writes them; then proves every configured agent with one real request through its own binary.
 */
import { availableParallelism } from 'node:os';
import type { CreatedApiKey } from '../../shared/wire.js';
import type { EnvImportReply, KeychainImportReply } from '../../shared/imports.js';
import { createBackup, readOrNull, writeAtomic } from '../../shared/agent-tools/backup.js';
import { writtenHashes } from '../../shared/agent-tools/tools.js';
import type { DaemonClient } from '../client.js';
import { chooseProvider, DEFAULT_MODELS, notConfigured } from './agents.js';
import { readRuns, writeRuns, type SetupRun } from './journal.js';
import { configHome, type AgentPlan, type SetupPlan } from './plan.js';
import { prove, type Proof } from './proof.js';

export interface CredentialResult {
  /** `OPENAI_API_KEY`, or `service:account` of a login. */
  source: string;
  provider: string;
  action: string;
  connectionId: string | null;
  ok: boolean | null;
  /** The upstream's reason when it refused the credential. */
  error?: string;
  fix?: string;
}

export interface AgentResult {
  id: string;
  name: string;
  version: string | null;
  action: 'configured' | 'unchanged' | 'unsupported' | 'failed';
  model?: string;
  keyId?: string;
  files: string[];
  proof: Proof | null;
  /** Why the agent was not configured or proven, and the fix (when `proof` does not say it). */
  reason?: string;
  fix?: string;
}

interface Connection {
  id: string;
  providerId: string;
  isActive: boolean;
  testStatus: string | null;
}

async function importCredentials(client: DaemonClient, plan: SetupPlan): Promise<{ results: CredentialResult[]; created: string[] }> {
  const results: CredentialResult[] = [];
  const created: string[] = [];
  if (plan.env.length) {
    const reply = await client.request<EnvImportReply>('POST', '/api/providers/env/import', { credentials: plan.env.map((e) => e.credential) }, 120_000);
    for (const r of reply.results) {
      if (r.action === 'created' && r.connectionId) created.push(r.connectionId);
      results.push({
        source: r.variable,
        provider: r.provider,
        action: r.action,
        connectionId: r.connectionId,
        ok: r.test?.ok ?? null,
        ...(r.test && !r.test.ok ? { error: r.test.error, fix: `set a key ${r.provider} accepts in ${r.variable} (or remove it) and run \`router setup\` again` } : {}),
      });
    }
  }
  const wanted = plan.logins.filter((l) => l.action === 'import').map(({ account: a }) => ({ service: a.service, account: a.account, fingerprint: a.fingerprint }));
  if (wanted.length) {
    const reply = await client.request<KeychainImportReply>('POST', '/api/providers/keychain/import', { confirmedAccounts: wanted }, 60_000);
    for (const i of reply.imported) {
      if (i.connection.created) created.push(i.connection.id);
      const test = await client.request<{ ok: boolean; error?: string }>('POST', `/api/providers/${encodeURIComponent(i.connection.id)}/test`, undefined, 60_000);
      results.push({
        source: `${i.service}:${i.account}`,
        provider: i.connection.provider,
        action: i.connection.created ? 'created' : 'updated',
        connectionId: i.connection.id,
        ok: test.ok,
        ...(test.ok ? {} : { error: test.error, fix: `sign in again with the agent's own CLI (or \`router login ${i.connection.provider}\`), then run \`router setup\` again` }),
      });
    }
    for (const s of reply.skipped) results.push({ source: `${s.service}:${s.account}`, provider: '', action: `skipped (${s.reason})`, connectionId: null, ok: null });
  }
  return { results, created };
}

/** Providers with an account that works, in the order they were added. */
async function workingProviders(client: DaemonClient): Promise<Array<{ provider: string; connectionId: string }>> {
  const { connections } = await client.request<{ connections: Connection[] }>('GET', '/api/providers');
  const out: Array<{ provider: string; connectionId: string }> = [];
  for (const c of connections) if (c.isActive && c.testStatus !== 'error' && !out.some((o) => o.provider === c.providerId)) out.push({ provider: c.providerId, connectionId: c.id });
  return out;
}

async function modelFor(client: DaemonClient, provider: string, connectionId: string): Promise<string | undefined> {
  if (DEFAULT_MODELS[provider]) return `${provider}/${DEFAULT_MODELS[provider]}`;
  const { models } = await client.request<{ models: Array<{ id: string }> }>('GET', `/api/providers/${encodeURIComponent(connectionId)}/models`);
  return models[0] ? `${provider}/${models[0].id}` : undefined;
}

/** Writes one agent's settings (backup first); returns the backup entry's folder. */
function writeSettings(stateHome: string, a: AgentPlan, baseUrl: string, key: string, keyId: string, model: string): string {
  const input = { configHome: configHome(), env: process.env, baseUrl, key, model, smallModel: model };
  const files = a.files.map((path) => {
    const before = readOrNull(path);
    return { path, before, after: a.spec!.tool.render(input, path, before) };
  });
  const entry = createBackup(stateHome, { tool: a.id, configHome: configHome(), keyId }, files.map((f) => ({ path: f.path, ...writtenHashes(a.spec!.tool, f.path, f.after) })));
  for (const f of files) writeAtomic(f.path, f.after, entry.files.find((e) => e.path === f.path)?.mode ?? 0o600);
  return entry.dir!;
}

/** Runs the jobs, at most `limit` at a time, in order. */
async function inTurns(jobs: Array<() => Promise<void>>, limit: number): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < jobs.length) await jobs[next++]!();
  };
  await Promise.all(Array.from({ length: Math.min(limit, jobs.length) }, worker));
}

/** Applies the plan and proves each agent; records what changed for `--undo`. */
export async function applyPlan(client: DaemonClient, plan: SetupPlan, stateHome: string): Promise<{ credentials: CredentialResult[]; agents: AgentResult[] }> {
  const { results: credentials, created } = await importCredentials(client, plan);
  const working = await workingProviders(client);
  const run: SetupRun = { at: new Date().toISOString(), agents: [], connections: created };
  const agents: AgentResult[] = [];
  const proofs: Array<() => Promise<void>> = [];
  for (const a of plan.agents) {
    const base = { id: a.id, name: a.name, version: a.version, files: a.files, proof: null };
    if (a.action === 'unsupported') {
      agents.push({ ...base, action: 'unsupported', ...notConfigured(a.id, a.name) });
      continue;
    }
    let key = a.key;
    let keyId = a.keyId;
    let model: string | undefined;
    if (a.action === 'configure') {
      const provider = chooseProvider(a.spec!, working.map((w) => w.provider));
      const conn = working.find((w) => w.provider === provider);
      model = conn ? await modelFor(client, conn.provider, conn.connectionId) : undefined;
      if (!model) {
        agents.push({ ...base, action: 'failed', reason: 'no working account to send its requests to', fix: 'set a provider API key (e.g. ANTHROPIC_API_KEY) or sign in (`router login <provider>`), then run `router setup` again' });
        continue;
      }
      const made = await client.request<CreatedApiKey>('POST', '/api/keys', { name: `setup ${a.id}`, scopes: ['proxy'] });
      key = made.key;
      keyId = made.id;
      run.agents.push({ id: a.id, backupDir: writeSettings(stateHome, a, plan.url, key, keyId, model), keyId });
      writeRuns(stateHome, [...readRuns(stateHome).filter((r) => r.at !== run.at), run]);
    }
    const result: AgentResult = { ...base, action: a.action === 'configure' ? 'configured' : 'unchanged', ...(model ? { model } : {}), keyId, proof: null };
    if (a.spec!.proofArgs) proofs.push(() => prove(client, a.spec!, a.path, keyId!, key!, process.env).then((p) => void (result.proof = p)));
    else result.reason = `${a.name} has no one-shot command to prove it with`;
    agents.push(result);
  }
  if (run.agents.length === 0 && created.length > 0) writeRuns(stateHome, [...readRuns(stateHome), run]);
  // Several agents answer at once (each proof has its own key, so the request log tells them apart), but no
  // more than the machine has cores: each is a heavy process, and starved ones miss their proof's deadline.
  await inTurns(proofs, Math.max(2, Math.min(4, availableParallelism())));
  return { credentials, agents };
}
