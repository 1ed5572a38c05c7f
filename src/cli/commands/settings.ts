import type { Command } from 'commander';
import { CliError } from '../io.js';
import { didYouMean } from '../suggest.js';
import { examples, withCommon, type CommandContext } from '../common.js';

type Settings = Record<string, unknown>;

/** Parses a value given on the command line: JSON when it is JSON (true, 42, ["a"]), else a string. */
function parseValue(raw: string): unknown {
  try {
    return JSON.parse(raw);
  } catch {
    return raw;
  }
}

const isObject = (v: unknown): v is Settings => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Every name `settings get/set` accepts: top-level settings and `parent.child` for object settings. */
export function settingNames(all: Settings): string[] {
  return Object.entries(all).flatMap(([k, v]) => [k, ...(isObject(v) ? Object.keys(v).map((c) => `${k}.${c}`) : [])]);
}

/** The value of a (possibly dotted) setting name; an unknown name is a usage error with a suggestion. */
export function lookup(all: Settings, name: string): unknown {
  const [head, ...rest] = name.split('.');
  let value: unknown = all;
  for (const part of [head!, ...rest]) {
    if (!isObject(value) || !(part in value)) {
      throw new CliError(`no such setting '${name}'.${didYouMean(name, settingNames(all))} See \`router settings get\`.`, 2);
    }
    value = value[part];
  }
  return value;
}

/**
 * The PATCH body that sets one (possibly dotted) setting. A nested value is merged into its parent's
 * current object, so `compression.enabled` changes that field and keeps the others as they are.
 */
export function patchFor(all: Settings, name: string, value: unknown): Settings {
  lookup(all, name);
  const [head, ...rest] = name.split('.');
  if (rest.length === 0) return { [head!]: value };
  const merged = structuredClone(all[head!]) as Settings;
  let at = merged;
  for (const part of rest.slice(0, -1)) at = at[part] as Settings;
  at[rest[rest.length - 1]!] = value;
  return { [head!]: merged };
}

export function register(program: Command, ctx: CommandContext): void {
  const { io } = ctx;
  const settings = program.command('settings').description("read and change the daemon's settings (nested ones as parent.child)");
  examples(withCommon(settings.command('get [name]')), [
    'router settings get',
    'router settings get requireLogin',
    'router settings get compression.enabled',
    'router settings get --json',
  ])
    .description('print all settings, or one')
    .option('--json', 'print JSON')
    .action(
      ctx.run(async (opts, name?: string) => {
        const all = await ctx.client(opts).request<Settings>('GET', '/api/settings');
        if (name !== undefined) {
          io.out(JSON.stringify(lookup(all, name)));
          return 0;
        }
        if (opts.json) io.out(JSON.stringify(all));
        else for (const [k, v] of Object.entries(all)) io.out(`${k} = ${JSON.stringify(v)}`);
        return 0;
      }),
    );
  withCommon(settings.command('set <name> <value>'))
    .description('change one setting (the value is read as JSON when it is JSON, else as text)')
    .addHelpText(
      'after',
      '\nExamples:\n  router settings set requireLogin false\n  router settings set compression.enabled true\n  router settings set allowedOrigins \'["http://localhost:5173"]\'',
    )
    .action(
      ctx.run(async (opts, name: string, raw: string) => {
        const c = ctx.client(opts);
        const all = await c.request<Settings>('GET', '/api/settings');
        const next = await c.request<Settings>('PATCH', '/api/settings', patchFor(all, name, parseValue(raw)));
        io.out(`${name} = ${JSON.stringify(lookup(next, name))}`);
        return 0;
      }),
    );
}
