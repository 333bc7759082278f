import type { Command } from "commander";
import { choiceArgument } from "../choices.js";

/** Every command path of the tree (`""`, `jobs`, `jobs submit`, …) with the words that may follow it. */
function completions(command: Command, path = ""): Array<{ path: string; words: string[] }> {
  const words = [
    ...command.commands.flatMap((sub) => [sub.name(), ...sub.aliases()]),
    ...command.options.flatMap((option) =>
      [option.long, option.short].filter((flag): flag is string => flag !== undefined),
    ),
    "--help",
  ];
  const below = (name: string) => (path === "" ? name : `${path} ${name}`);
  return [
    { path, words },
    ...command.commands.flatMap((sub) =>
      [sub.name(), ...sub.aliases()].flatMap((name) => completions(sub, below(name))),
    ),
  ];
}

/**
 * A bash completion script made from the command tree itself, so it never falls behind
 * the commands. zsh runs it through bashcompinit.
 */
export function completionScript(program: Command, shell: "bash" | "zsh"): string {
  const entries = completions(program);
  const known = `|${entries.map((entry) => entry.path).join("|")}|`;
  const cases = entries.map((entry) => `    "${entry.path}") words="${entry.words.join(" ")}" ;;`).join("\n");
  const bash = `_cjs_complete() {
  local cur="\${COMP_WORDS[COMP_CWORD]}" path="" word candidate words=""
  local known="${known}"
  for word in "\${COMP_WORDS[@]:1:COMP_CWORD-1}"; do
    candidate="\${path:+$path }$word"
    [[ "$known" == *"|$candidate|"* ]] && path="$candidate"
  done
  case "$path" in
${cases}
  esac
  COMPREPLY=( $(compgen -W "$words" -- "$cur") )
}
complete -o default -F _cjs_complete cjs
`;
  return shell === "zsh" ? `autoload -U +X bashcompinit && bashcompinit\n${bash}` : bash;
}

export function registerCompletionCommand(program: Command): void {
  program
    .command("completion")
    .description("Print a shell completion script: `source <(cjs completion bash)`, or add it to ~/.bashrc / ~/.zshrc")
    .addArgument(choiceArgument("<shell>", "the shell", ["bash", "zsh"]))
    .action((shell: "bash" | "zsh") => {
      process.stdout.write(completionScript(program, shell));
    });
}
