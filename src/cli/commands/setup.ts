import type { Command } from 'commander';
import { backupEntries, changedSince, restore } from '../../shared/agent-tools/backup.js';
import { toolById } from '../../shared/agent-tools/tools.js';
import type { DaemonClient } from '../client.js';
import { CliError, type Io, table } from '../io.js';
import { confirm } from '../prompt.js';
import { notConfigured } from '../setup/agents.js';
import { applyPlan, type AgentResult, type CredentialResult } from '../setup/apply.js';
import { readRuns, writeRuns } from '../setup/journal.js';
import { makePlan, type SetupPlan } from '../setup/plan.js';
import { resolveTarget } from '../target.js';
import { examples, withCommon, type CommandContext } from '../common.js';
import { startCommand } from './start.js';

const silent: Io = { out: () => {}, err: () => {} };

const AGENT_ACTION = { configure: 'point it at router', unchanged: 'already points at router' } as const;
const CRED_ACTION = { created: 'import', updated: 'update the connection from an earlier setup', unchanged: 'already imported', unsupported: 'not a provider router has', import: 'import' } as const;

/** The one summary before anything changes; never a secret (keys appear as their variable's name). */
function summary(plan: SetupPlan, started: boolean): string {
  const lines = [`router ${started ? 'started' : 'is running'} at ${plan.url}`, '', 'Coding agents:'];
  if (plan.agents.length === 0) lines.push('  none found on PATH (Claude Code, Codex, Gemini CLI, OpenCode, Qwen Code, Copilot CLI, Cline, Cursor)');
  for (const a of plan.agents) lines.push(`  ${a.name} ${a.version ?? ''} (${a.path}): ${a.action === 'unsupported' ? `left as it is: ${notConfigured(a.id, a.name).reason}` : AGENT_ACTION[a.action]}`);
  lines.push('', 'Credentials:');
  if (plan.env.length + plan.logins.length === 0) lines.push('  none found (provider API keys in the environment, CLI logins)');
  for (const e of plan.env) lines.push(`  ${e.credential.variable} (${e.credential.provider}${e.credential.baseUrl ? ` at ${e.credential.baseUrl}` : ''}): ${CRED_ACTION[e.action]}`);
  for (const l of plan.logins) lines.push(`  ${l.account.service}:${l.account.account} (${l.account.provider} login, ${l.account.kind}): ${CRED_ACTION[l.action]}`);
  if (plan.changes) lines.push('', 'Each agent gets its own API key; its settings are backed up before they change (`router setup --undo` restores them).');
  return lines.join('\n');
}

function credentialRow(c: CredentialResult): string[] {
  const result = c.ok === null ? c.action : c.ok ? 'ok' : 'refused';
  return [c.source, c.provider, result, c.ok === false ? `${c.error}; fix: ${c.fix}` : c.action];
}

function agentRow(a: AgentResult): string[] {
  const p = a.proof;
  const result = p ? (p.ok ? 'ok' : 'failed') : a.action === 'unsupported' ? 'skipped' : a.action === 'failed' ? 'failed' : 'not proven';
  const detail = p
    ? p.ok
      ? `${a.action}${a.model ? `, model ${a.model}` : ''}; \`${p.command}\` answered through router${p.warning ? `; note: ${p.warning}` : ''}`
      : `${p.reason}; fix: ${p.fix}${p.warning ? `; note: ${p.warning}` : ''}`
    : `${a.reason ?? a.action}${a.fix ? `; fix: ${a.fix}` : ''}`;
  return [a.name, a.version ?? '', result, detail];
}

function report(credentials: CredentialResult[], agents: AgentResult[]): string {
  const parts: string[] = [];
  if (credentials.length) parts.push(table(['CREDENTIAL', 'PROVIDER', 'RESULT', 'DETAIL'], credentials.map(credentialRow)));
  parts.push(agents.length ? table(['AGENT', 'VERSION', 'RESULT', 'DETAIL'], agents.map(agentRow)) : 'No coding agent to set up.');
  return parts.join('\n\n');
}

/** Starts the daemon when it is not running; true when this run started it. */
async function ensureDaemon(opts: any): Promise<boolean> {
  if (resolveTarget(opts).running) return false;
  await startCommand({ ...opts, json: true }, silent);
  return true;
}

async function setup(ctx: CommandContext, opts: any): Promise<number> {
  const { io } = ctx;
  const started = await ensureDaemon(opts);
  const target = resolveTarget(opts);
  const client: DaemonClient = ctx.client(opts);
  const plan = await makePlan(client, target.url);
  if (!opts.json) io.out(summary(plan, started));
  if (plan.changes && !opts.yes && !(io.interactive && io.ask)) {
    if (opts.json) io.out(JSON.stringify({ applied: false, plan: planJson(plan) }));
    io.err('router: nothing changed: confirm with `router setup --yes` (or run it in a terminal and answer the question).');
    return 2;
  }
  if (plan.changes && !(await confirm(io, 'Go ahead?', opts.yes))) {
    io.out('nothing changed');
    return 1;
  }
  if (!plan.changes && !opts.json) io.out('\nNothing to change; proving each agent again.');
  const { credentials, agents } = await applyPlan(client, plan, target.paths.home);
  const ok = credentials.every((c) => c.ok !== false) && agents.every((a) => a.action !== 'failed' && (a.proof === null || a.proof.ok));
  ctx.emit(opts, { applied: true, url: plan.url, daemonStarted: started, changed: plan.changes, credentials, agents }, () => `\n${report(credentials, agents)}`);
  return ok ? 0 : 1;
}

function planJson(plan: SetupPlan) {
  return {
    url: plan.url,
    changes: plan.changes,
    agents: plan.agents.map((a) => ({ id: a.id, name: a.name, version: a.version, path: a.path, action: a.action, files: a.files })),
    credentials: [
      ...plan.env.map((e) => ({ source: e.credential.variable, provider: e.credential.provider, baseUrl: e.credential.baseUrl ?? null, action: e.action })),
      ...plan.logins.map((l) => ({ source: `${l.account.service}:${l.account.account}`, provider: l.account.provider, action: l.action })),
    ],
  };
}

async function undo(ctx: CommandContext, opts: any): Promise<number> {
  const { io } = ctx;
  const target = resolveTarget(opts);
  const runs = readRuns(target.paths.home);
  const last = runs[runs.length - 1];
  if (!last || last.agents.length === 0) throw new CliError('nothing to undo: router setup has not changed any agent settings');
  const entries = last.agents.map((a) => ({ ...a, entry: backupEntries(target.paths.home, a.id).find((e) => e.dir === a.backupDir) }));
  const changed = entries.flatMap((e) => (e.entry ? changedSince(e.entry, toolById(e.id)?.stable) : []));
  if (changed.length && !opts.force) {
    throw new CliError(`${changed.join(', ')} changed after router setup wrote ${changed.length === 1 ? 'it' : 'them'}; undo would discard those edits.`, 1, 'Look at the files, then run again with --force to restore them anyway.');
  }
  if (!opts.json) for (const e of entries) for (const f of e.entry?.files ?? []) io.out(`${f.existed ? 'restore' : 'remove (setup created it)'} ${f.path}`);
  if (!opts.yes && !(io.interactive && io.ask)) {
    io.err('router: nothing changed: confirm with `router setup --undo --yes` (or run it in a terminal and answer the question).');
    return 2;
  }
  if (!(await confirm(io, `Undo router setup of ${last.at}?`, opts.yes))) {
    io.out('nothing restored');
    return 1;
  }
  for (const e of entries) if (e.entry) restore(e.entry);
  writeRuns(target.paths.home, runs.slice(0, -1));
  const removed: string[] = [];
  const kept: string[] = [];
  for (const e of entries) {
    if (!e.keyId) continue;
    try {
      await ctx.client(opts).request('DELETE', `/api/keys/${encodeURIComponent(e.keyId)}`);
      removed.push(e.keyId);
    } catch (err) {
      if ((err as CliError).status === 404) removed.push(e.keyId);
      else kept.push(e.keyId);
    }
  }
  const result = { restored: entries.flatMap((e) => (e.entry?.files ?? []).map((f) => ({ path: f.path, deleted: !f.existed }))), keysRemoved: removed, keysKept: kept, connectionsKept: last.connections };
  ctx.emit(opts, result, () =>
    [
      `Restored the settings of ${entries.map((e) => e.id).join(', ')} as they were before ${last.at}.`,
      ...(removed.length ? [`Removed the API keys setup made: ${removed.join(', ')}.`] : []),
      ...(kept.length ? [`Could not remove the keys ${kept.join(', ')} (is the daemon running?): \`router keys rm <id>\`.`] : []),
      ...(last.connections.length ? [`The accounts setup imported stay (${last.connections.join(', ')}); remove one with \`router providers rm <id>\`.`] : []),
    ].join('\n'),
  );
  return 0;
}

export function register(program: Command, ctx: CommandContext): void {
  examples(withCommon(program.command('setup')), [
    'router setup               # find agents and logins, show a summary, ask, configure, prove each agent',
    'router setup --yes --json  # the same for scripts',
    'router setup --undo        # restore the agent settings the last setup changed',
  ])
    .description('from a fresh install to every coding agent working: finds agents and credentials, configures each agent, proves it with one real request')
    .option('-y, --yes', 'do not ask before changing anything')
    .option('--json', 'print the result as JSON')
    .option('--undo', 'restore the agent settings the last setup changed, byte for byte, and remove the keys it made')
    .option('--force', 'with --undo: restore even if the files changed since')
    .action(ctx.run(async (opts) => (opts.undo ? undo(ctx, opts) : setup(ctx, opts))));
}
