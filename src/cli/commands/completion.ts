import { Argument, type Command } from 'commander';
import { examples, type CommandContext } from '../common.js';

/** One node of the command tree as the completion scripts need it. */
interface Node {
  path: string;
  description: string;
  subcommands: Node[];
  options: Array<{ flag: string; takesValue: boolean; description: string }>;
  /** Fixed values of the first positional argument (e.g. shells, tool names). */
  choices: string[];
}

/** Walks commander's tree: the scripts are generated from it, so they never drift from the program. */
export function commandTree(cmd: Command, prefix = ''): Node {
  const path = prefix ? `${prefix} ${cmd.name()}` : cmd.name();
  const options = cmd.options
    .filter((o) => o.long && !o.hidden)
    .map((o) => ({ flag: o.long!, takesValue: o.required || o.optional, description: o.description }));
  options.push({ flag: '--help', takesValue: false, description: 'show help' });
  const first = cmd.registeredArguments[0];
  return {
    path,
    description: cmd.description(),
    subcommands: cmd.commands.filter((c) => c.name() !== 'help').map((c) => commandTree(c, path)),
    options,
    choices: first?.argChoices ?? [],
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
    .map((n) => `    "${n.path}") words=${q([...n.subcommands.map((s) => s.path.split(' ').pop()!), ...n.choices, ...n.options.map((o) => o.flag)].join(' '))} ;;`)
    .join('\n');
  return `# bash completion for router; load with: source <(router completion bash)
_router() {
  local cur=\${COMP_WORDS[COMP_CWORD]} cmdpath=router w i words=
  for ((i = 1; i < COMP_CWORD; i++)); do
    w=\${COMP_WORDS[i]}
    [[ $w == -* ]] && continue
    case "$cmdpath $w" in
      ${known}) cmdpath="$cmdpath $w" ;;
    esac
  done
  case "$cmdpath" in
${cases}
  esac
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

export function register(program: Command, ctx: CommandContext): void {
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
