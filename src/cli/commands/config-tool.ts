import { homedir } from 'node:os';
import { resolve } from 'node:path';
import { Argument, type Command } from 'commander';
import type { CreatedApiKey } from '../../shared/wire.js';
import type { CliToolChangeInput } from '../../shared/observability.js';
import { changedSince, createBackup, latestBackup, originalContent, readOrNull, restore, writeAtomic } from '../../shared/agent-tools/backup.js';
import { unifiedDiff } from '../config-tool/diff.js';
import { ConfigFileError } from '../../shared/agent-tools/edit.js';
import { TOOLS, toolById, writtenHashes, type ToolDef, type ToolInput } from '../../shared/agent-tools/tools.js';
import { CliError, table } from '../io.js';
import { confirm, readStdin } from '../prompt.js';
import { resolveTarget } from '../target.js';
import { examples, withCommon, type CommandContext } from '../common.js';

/** Stand-in for a key not created yet: the diff is shown before anything happens. */
const PENDING_KEY = 'rk_(new key, created on confirmation)';

/** Hides a key in what is printed: the diff must not put a secret on the screen or in a log. */
export function maskKey(text: string, key: string): string {
  if (!key || key === PENDING_KEY) return text;
  const shown = key.length > 12 ? `${key.slice(0, 6)}...${key.slice(-4)}` : '***';
  return text.split(key).join(shown);
}

interface Plan {
  file: string;
  before: string | null;
  after: string;
}

/**
 * Reports a change to the daemon's log (`GET /api/cli-tools/logs`). The files are already written: a
 * daemon that is not running or refuses only costs the log entry, said on stderr.
 */
async function report(ctx: CommandContext, opts: any, change: CliToolChangeInput): Promise<void> {
  try {
    await ctx.client(opts).request('POST', '/api/cli-tools/logs', change, 5_000);
  } catch (err) {
    ctx.io.err(`note: router's change log did not record this (${(err as Error).message})`);
  }
}

function plan(tool: ToolDef, input: ToolInput): Plan[] {
  return tool.files(input).map((file) => {
    const before = readOrNull(file);
    try {
      return { file, before, after: tool.render(input, file, before) };
    } catch (err) {
      throw err instanceof ConfigFileError ? new CliError(err.message) : err;
    }
  });
}

function showDiff(ctx: CommandContext, plans: Plan[], key: string): void {
  for (const p of plans) {
    const d = unifiedDiff(p.before, p.after, p.file);
    if (d) ctx.io.out(maskKey(d, key));
  }
}

async function obtainKey(ctx: CommandContext, opts: any, tool: ToolDef): Promise<{ key: string; keyId: string | null }> {
  if (opts.key && opts.keyStdin) throw new CliError('give --key or --key-stdin, not both', 2);
  if (opts.keyStdin) {
    const key = (await readStdin()).trim();
    if (!key) throw new CliError('--key-stdin read nothing from stdin', 2);
    return { key, keyId: null };
  }
  if (opts.key) return { key: opts.key, keyId: null };
  const created = await ctx.client(opts).request<CreatedApiKey>('POST', '/api/keys', { name: `config-tool ${tool.id}`, scopes: ['proxy'] });
  return { key: created.key, keyId: created.id };
}

async function apply(ctx: CommandContext, opts: any, tool: ToolDef): Promise<number> {
  const target = resolveTarget(opts);
  const configHome = resolve(opts.configHome ?? homedir());
  const base = {
    configHome,
    env: process.env,
    baseUrl: (opts.url ?? target.url).replace(/\/+$/, ''),
    model: opts.model ?? tool.defaultModel,
    smallModel: opts.smallModel ?? opts.model ?? tool.defaultModel,
  };
  const given = opts.key ? String(opts.key) : undefined;
  const preview = plan(tool, { ...base, key: given ?? PENDING_KEY });
  if (!opts.json) showDiff(ctx, preview, given ?? PENDING_KEY);
  const changes = preview.filter((p) => p.before !== p.after);
  if (changes.length === 0 && given !== undefined) {
    ctx.emit(opts, { tool: tool.id, changed: [], backup: null, keyId: null }, () => `${tool.name} already points at router; nothing to change`);
    return 0;
  }
  if (opts.dryRun) {
    if (opts.json) ctx.io.out(JSON.stringify({ tool: tool.id, dryRun: true, files: preview.map((p) => ({ path: p.file, exists: p.before !== null, changes: p.before !== p.after })) }));
    else ctx.io.out('(dry run: nothing written)');
    return 0;
  }
  if (!(await confirm(ctx.io, `Write these changes to ${tool.name}'s settings?`, opts.yes))) {
    ctx.io.out('nothing written');
    return 1;
  }
  const { key, keyId } = await obtainKey(ctx, opts, tool);
  const final = plan(tool, { ...base, key });
  const entry = createBackup(target.paths.home, { tool: tool.id, configHome, keyId }, final.map((p) => ({ path: p.file, ...writtenHashes(tool, p.file, p.after) })));
  for (const p of final) {
    const mode = entry.files.find((f) => f.path === p.file)?.mode ?? 0o600;
    writeAtomic(p.file, p.after, mode);
  }
  const result = { tool: tool.id, files: final.map((p) => p.file), backup: entry.dir, keyId, model: base.model, baseUrl: base.baseUrl };
  await report(ctx, opts, {
    ...result,
    action: 'apply',
    files: final.filter((p) => p.before !== p.after).map((p) => ({ path: p.file, action: p.before === null ? 'created' : 'modified' })),
  });
  ctx.emit(opts, result, () =>
    [
      `${tool.name} now uses router at ${base.baseUrl} with model ${base.model}${keyId ? ` (new API key ${keyId})` : ''}.`,
      ...final.map((p) => `  wrote ${p.file}`),
      `Backup: ${entry.dir}`,
      `Undo with: router config-tool ${tool.id} --undo${opts.configHome ? ` --config-home ${configHome}` : ''}`,
      ...(tool.note ? [tool.note] : []),
    ].join('\n'),
  );
  return 0;
}

async function undo(ctx: CommandContext, opts: any, tool: ToolDef): Promise<number> {
  const target = resolveTarget(opts);
  const configHome = resolve(opts.configHome ?? homedir());
  const entry = latestBackup(target.paths.home, tool.id, configHome);
  if (!entry) throw new CliError(`nothing to undo: router has not changed ${tool.name}'s settings in ${configHome}`);
  const changed = changedSince(entry, tool.stable);
  if (changed.length && !opts.force) {
    throw new CliError(
      `${changed.join(', ')} changed after router wrote ${changed.length === 1 ? 'it' : 'them'}; undo would discard those edits.`,
      1,
      'Look at the file, then run again with --force to restore the backup anyway.',
    );
  }
  if (!opts.json) {
    for (const f of entry.files) {
      const d = unifiedDiff(readOrNull(f.path), originalContent(entry, f), f.path);
      if (d) ctx.io.out(d.replace(/(rk_[A-Za-z0-9_-]{6})[A-Za-z0-9_-]+([A-Za-z0-9_-]{4})/g, '$1...$2'));
    }
  }
  if (!(await confirm(ctx.io, `Restore ${tool.name}'s settings from ${entry.createdAt}?`, opts.yes))) {
    ctx.io.out('nothing restored');
    return 1;
  }
  restore(entry);
  await report(ctx, opts, {
    tool: tool.id,
    action: 'undo',
    files: entry.files.map((f) => ({ path: f.path, action: f.existed ? 'restored' : 'removed' })),
    backup: entry.dir,
    keyId: entry.keyId,
  });
  const result = { tool: tool.id, restored: entry.files.map((f) => ({ path: f.path, deleted: !f.existed })), keyId: entry.keyId };
  ctx.emit(opts, result, () =>
    [
      ...entry.files.map((f) => (f.existed ? `  restored ${f.path}` : `  removed ${f.path} (router had created it)`)),
      ...(entry.keyId ? [`The API key ${entry.keyId} made for ${tool.name} still exists; remove it with \`router keys rm ${entry.keyId}\`.`] : []),
    ].join('\n'),
  );
  return 0;
}

function listTools(ctx: CommandContext, opts: any): number {
  const configHome = resolve(opts.configHome ?? homedir());
  const stateHome = resolveTarget(opts).paths.home;
  const rows = TOOLS.map((t) => ({
    id: t.id,
    name: t.name,
    files: t.files({ configHome, env: process.env }),
    configured: latestBackup(stateHome, t.id, configHome) !== undefined,
  }));
  ctx.emit(opts, rows, () => table(['TOOL', 'NAME', 'CONFIGURED BY ROUTER', 'FILES'], rows.map((r) => [r.id, r.name, r.configured ? 'yes' : 'no', r.files.join(', ')]), [], { flex: [1, 3] }));
  return 0;
}

export function register(program: Command, ctx: CommandContext): void {
  const cmd = examples(withCommon(program.command('config-tool')), [
    'router config-tool                           # list the tools and whether router configured them',
    'router config-tool claude-code               # show the diff, ask, write (creates an API key)',
    'router config-tool codex --model my-combo --yes',
    'router config-tool opencode --dry-run',
    'router config-tool claude-code --undo        # restore the settings as they were',
  ])
    .description('point a coding tool (Claude Code, Codex, Gemini CLI, OpenCode, Cline, Qwen Code, Copilot CLI) at router: shows a diff, asks, writes, can undo')
    .addArgument(new Argument('[tool]', TOOLS.map((t) => t.id).join(', ')).choices(TOOLS.map((t) => t.id)))
    .option('--model <model>', "the model the tool asks for: <provider>/<model> or a combo (default: per tool)")
    .option('--small-model <model>', 'model for background work where the tool has one (default: --model)')
    .option('--key <key>', 'use this router API key instead of creating one')
    .option('--key-stdin', 'read the router API key from stdin')
    .option('--url <url>', "router's address as the tool should reach it (default: the daemon's URL)")
    .option('--config-home <dir>', "the folder holding the tool's settings (default: your home folder)")
    .option('--dry-run', 'show the diff and stop')
    .option('-y, --yes', 'do not ask before writing')
    .option('--undo', 'restore the files as they were before router last changed them')
    .option('--force', 'with --undo: restore even if the files changed since')
    .option('--json', 'print the result as JSON (no diff)');
  cmd.action(
    ctx.run(async (opts, id?: string) => {
      if (!id) return listTools(ctx, opts);
      const tool = toolById(id)!;
      return opts.undo ? undo(ctx, opts, tool) : apply(ctx, opts, tool);
    }),
  );
}
