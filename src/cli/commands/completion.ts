import { Argument, type Command } from 'commander';
import { COMBO_STRATEGIES } from '../../shared/records.js';
import { examples, withCommon, type CommandContext } from '../common.js';

/** Names only the daemon knows, completed by asking it (`router __complete <kind>`, 1.5 s at most). */
export const DYNAMIC = ['providers', 'combos', 'keys', 'connections'] as const;
type Dynamic = (typeof DYNAMIC)[number];

/**
 * What to complete where: the value of an option (`path --flag`) or a command's first argument (`path`),
 * a fixed list or a kind of name the daemon knows.
 */
const VALUES: Record<string, readonly string[] | Dynamic> = {
  'router combos add --strategy': COMBO_STRATEGIES,
  'router combos edit --strategy': COMBO_STRATEGIES,
  'router combos show': 'combos',
  'router combos edit': 'combos',
  'router combos rm': 'combos',
  'router keys rename': 'keys',
  'router keys rm': 'keys',
  'router keys disable': 'keys',
  'router keys enable': 'keys',
  'router keys limits': 'keys',
  'router keys memory': 'keys',
  'router keys memory --inject': ['on', 'off'],
  'router keys memory --extract': ['on', 'off'],
  'router providers add': 'providers',
  'router providers reset': 'providers',
  'router providers test': 'connections',
  'router providers rm': 'connections',
  'router providers sync-models': 'connections',
  'router models --provider': 'providers',
  'router logs --provider': 'providers',
  'router config-tool --model': 'combos',
};

/** One node of the command tree as the completion scripts need it. */
interface Node {
  path: string;
  description: string;
  subcommands: Node[];
  options: Array<{ flag: string; takesValue: boolean; description: string; values?: readonly string[] | Dynamic }>;
  /** Fixed values of the first positional argument (e.g. shells, tool names). */
  choices: string[];
  /** Names the daemon knows, for the first positional argument. */
  dynamic?: Dynamic;
}

/** Walks commander's tree: the scripts are generated from it, so they never drift from the program. */
export function commandTree(cmd: Command, prefix = ''): Node {
  const path = prefix ? `${prefix} ${cmd.name()}` : cmd.name();
  const options = cmd.options
    .filter((o) => o.long && !o.hidden)
    .map((o): Node['options'][number] => ({ flag: o.long!, takesValue: o.required || o.optional, description: o.description, values: o.argChoices ?? VALUES[`${path} ${o.long}`] }));
  options.push({ flag: '--help', takesValue: false, description: 'show help' });
  const first = cmd.registeredArguments[0];
  const own = VALUES[path];
  return {
    path,
    description: cmd.description(),
    subcommands: cmd.commands.filter((c) => c.name() !== 'help' && !(c as unknown as { _hidden: boolean })._hidden).map((c) => commandTree(c, path)),
    options,
    choices: first?.argChoices ?? (Array.isArray(own) ? [...own] : []),
    dynamic: typeof own === 'string' ? (own as Dynamic) : undefined,
  };
}

function flatten(n: Node): Node[] {
  return [n, ...n.subcommands.flatMap(flatten)];
}

const q = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;
/** A one-line description for the menus: the first clause, no colons (zsh uses them as separators). */
const short = (s: string) => s.split(/[;(]/)[0]!.trim().replace(/\n/g, ' ').replace(/\s*:\s*/g, ' - ').slice(0, 60);

export function bashScript(root: Node): string {
  const nodes = flatten(root);
  const known = nodes.filter((n) => n !== root).map((n) => `"${n.path}"`).join('|');
  const cases = nodes
    .map(
      (n) =>
        `    "${n.path}") words=${q([...n.subcommands.map((s) => s.path.split(' ').pop()!), ...n.choices, ...n.options.map((o) => o.flag)].join(' '))}${n.dynamic ? `; dyn=${n.dynamic}` : ''} ;;`,
    )
    .join('\n');
  const valueCases = nodes
    .flatMap((n) => n.options.filter((o) => o.values).map((o) => `    "${n.path} ${o.flag}") ${typeof o.values === 'string' ? `dyn=${o.values}; words=` : `words=${q(o.values!.join(' '))}`} ;;`))
    .join('\n');
  return `# bash completion for router; load with: source <(router completion bash)
_router() {
  local cur=\${COMP_WORDS[COMP_CWORD]} prev=\${COMP_WORDS[COMP_CWORD-1]} cmdpath=router w i words= dyn=
  local -a common=()
  for ((i = 1; i < COMP_CWORD; i++)); do
    w=\${COMP_WORDS[i]}
    # --home, --host and --port are passed on when names are asked of the daemon
    case "$w" in --home|--host|--port) common+=("$w" "\${COMP_WORDS[i+1]}") ;; esac
    [[ $w == -* ]] && continue
    case "$cmdpath $w" in
      ${known}) cmdpath="$cmdpath $w" ;;
    esac
  done
  case "$cmdpath $prev" in
${valueCases}
    *)
      case "$cmdpath" in
${cases}
      esac ;;
  esac
  [[ -n $dyn && $cur != -* ]] && words="$words $(router __complete "$dyn" "\${common[@]}" 2>/dev/null)"
  COMPREPLY=($(compgen -W "$words" -- "$cur"))
}
complete -o default -F _router router
`;
}

export function zshScript(root: Node): string {
  const nodes = flatten(root);
  const known = nodes.filter((n) => n !== root).map((n) => `"${n.path}"`).join('|');
  const cases = nodes
    .map((n) => {
      const cmds = [...n.subcommands.map((s) => `${s.path.split(' ').pop()}:${short(s.description)}`), ...n.choices.map((c) => `${c}:${c}`)];
      return `    ("${n.path}") cmds=(${cmds.map(q).join(' ')}); opts=(${n.options.map((o) => q(o.flag)).join(' ')}) ;;`;
    })
    .join('\n');
  return `#compdef router
# zsh completion for router; load with: source <(router completion zsh)  (after compinit)
_router() {
  local cmdpath=router w i
  local -a cmds opts
  for ((i = 2; i < CURRENT; i++)); do
    w=\${words[i]}
    [[ $w == -* ]] && continue
    case "$cmdpath $w" in
      (${known}) cmdpath="$cmdpath $w" ;;
    esac
  done
  case "$cmdpath" in
${cases}
  esac
  if [[ \${words[CURRENT]} == -* ]]; then
    compadd -- $opts
  else
    _describe 'command' cmds
  fi
}
if (( $+functions[compdef] )); then compdef _router router; fi
`;
}

export function fishScript(root: Node): string {
  const nodes = flatten(root);
  const lines = [
    '# fish completion for router; load with: router completion fish | source',
    `set -g __router_paths ${nodes.filter((n) => n !== root).map((n) => q(n.path)).join(' ')}`,
    'function __router_path',
    '  set -l p router',
    '  for t in (commandline -opc)[2..-1]',
    "    string match -q -- '-*' $t; and continue",
    '    contains -- "$p $t" $__router_paths; and set p "$p $t"',
    '  end',
    '  echo $p',
    'end',
    'complete -c router -f',
  ];
  for (const n of nodes) {
    const cond = `-n ${q(`test (__router_path) = "${n.path}"`)}`;
    for (const s of n.subcommands) lines.push(`complete -c router ${cond} -a ${q(s.path.split(' ').pop()!)} -d ${q(short(s.description))}`);
    for (const c of n.choices) lines.push(`complete -c router ${cond} -a ${q(c)}`);
    for (const o of n.options) lines.push(`complete -c router ${cond} -l ${o.flag.slice(2)}${o.takesValue ? ' -r' : ''} -d ${q(short(o.description))}`);
  }
  return `${lines.join('\n')}\n`;
}

/** Names of one kind the daemon knows, one a line; nothing (and exit 0) when it cannot be asked. */
async function names(ctx: CommandContext, opts: object, kind: Dynamic): Promise<string[]> {
  const c = ctx.client(opts);
  const get = <T>(path: string) => c.request<T>('GET', path, undefined, 1_500);
  switch (kind) {
    case 'providers':
      return (await get<{ providers: Array<{ id: string }> }>('/api/providers/catalog')).providers.map((p) => p.id);
    case 'combos':
      return (await get<{ combos: Array<{ name: string }> }>('/api/combos')).combos.map((x) => x.name);
    case 'keys':
      return (await get<{ keys: Array<{ name: string }> }>('/api/keys')).keys.map((k) => k.name);
    case 'connections':
      return (await get<{ connections: Array<{ name: string }> }>('/api/providers')).connections.map((x) => x.name);
  }
}

export function register(program: Command, ctx: CommandContext): void {
  examples(withCommon(program.command('__complete', { hidden: true })), ['router __complete keys     # key names, one a line'])
    .description('names for shell completion (used by the completion scripts)')
    .addArgument(new Argument('<kind>').choices([...DYNAMIC]))
    .action(
      ctx.run(async (opts, kind: Dynamic) => {
        const list = await names(ctx, opts, kind).catch(() => [] as string[]);
        // Names with spaces cannot be completed as one word by bash; they are left out.
        for (const n of [...new Set(list)].filter((x) => !/\s/.test(x)).sort()) ctx.io.out(n);
        return 0;
      }),
    );

  examples(program.command('completion'), [
    'source <(router completion bash)          # add to ~/.bashrc',
    'source <(router completion zsh)           # add to ~/.zshrc, after compinit',
    'router completion fish > ~/.config/fish/completions/router.fish',
  ])
    .description('print a shell completion script for bash, zsh or fish')
    .addArgument(new Argument('<shell>', 'bash, zsh or fish').choices(['bash', 'zsh', 'fish']))
    .action(
      ctx.run(async (_opts, shell: 'bash' | 'zsh' | 'fish') => {
        // This run registered the completion command only; the script describes the whole program.
        const { buildProgram } = await import('../index.js');
        const tree = commandTree((await buildProgram(ctx.io)).program);
        ctx.io.out({ bash: bashScript, zsh: zshScript, fish: fishScript }[shell](tree));
        return 0;
      }),
    );
}
