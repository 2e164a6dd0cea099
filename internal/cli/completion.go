package cli

import (
	"fmt"
	"io"
	"slices"
	"strings"
)

// shells are the shells Completion writes scripts for.
func shells() []string { return []string{"bash", "zsh", "fish"} }

// Completion writes the completion script of the program for shell: its
// commands, and each command's flags (flags[""] are the program's own,
// used when no command is typed). Other words complete as file names.
func (h *Help) Completion(w io.Writer, shell string, flags map[string][]string) error {
	fn := "_" + strings.NewReplacer("-", "_", ".", "_").Replace(h.Program)
	cmds := h.Names()
	names := func(c string) []string {
		var out []string
		for _, f := range slices.Sorted(slices.Values(flags[c])) {
			out = append(out, h.dash()+f)
		}
		return out
	}
	var cmdsWithFlags []string
	for _, c := range cmds {
		if len(flags[c]) > 0 {
			cmdsWithFlags = append(cmdsWithFlags, c)
		}
	}
	switch shell {
	case "bash":
		fmt.Fprintf(w, "# bash completion for %[1]s; load with: source <(%[1]s completion bash)\n", h.Program)
		fmt.Fprintf(w, "%s() {\n", fn)
		fmt.Fprintf(w, "  local cur=\"${COMP_WORDS[COMP_CWORD]}\" cmd=\"\" i\n")
		fmt.Fprintf(w, "  for ((i = 1; i < COMP_CWORD; i++)); do\n")
		fmt.Fprintf(w, "    case \"${COMP_WORDS[i]}\" in\n")
		if len(cmds) > 0 {
			fmt.Fprintf(w, "      %s) cmd=\"${COMP_WORDS[i]}\"; break ;;\n", strings.Join(cmds, "|"))
		}
		fmt.Fprintf(w, "      -*) ;;\n      *) break ;;\n    esac\n  done\n")
		fmt.Fprintf(w, "  local flags\n  case \"$cmd\" in\n")
		for _, c := range cmdsWithFlags {
			fmt.Fprintf(w, "    %s) flags=%q ;;\n", c, strings.Join(names(c), " "))
		}
		fmt.Fprintf(w, "    *) flags=%q ;;\n  esac\n", strings.Join(names(""), " "))
		fmt.Fprintf(w, "  if [[ \"$cur\" == -* ]]; then\n")
		fmt.Fprintf(w, "    COMPREPLY=($(compgen -W \"$flags\" -- \"$cur\"))\n")
		fmt.Fprintf(w, "  elif [[ \"$cmd\" == help ]]; then\n    COMPREPLY=($(compgen -W %q -- \"$cur\"))\n", strings.Join(cmds, " "))
		fmt.Fprintf(w, "  elif [[ \"$cmd\" == completion ]]; then\n    COMPREPLY=($(compgen -W %q -- \"$cur\"))\n", strings.Join(shells(), " "))
		fmt.Fprintf(w, "  elif [[ -z \"$cmd\" && $COMP_CWORD -eq 1 ]]; then\n")
		fmt.Fprintf(w, "    COMPREPLY=($(compgen -W %q -- \"$cur\") $(compgen -f -- \"$cur\"))\n", strings.Join(cmds, " "))
		fmt.Fprintf(w, "  else\n    COMPREPLY=($(compgen -f -- \"$cur\"))\n  fi\n}\n")
		fmt.Fprintf(w, "complete -o default -F %s %s\n", fn, h.Program)
	case "zsh":
		fmt.Fprintf(w, "#compdef %[1]s\n# zsh completion for %[1]s; load with: source <(%[1]s completion zsh)\n", h.Program)
		fmt.Fprintf(w, "%s() {\n  local cmd=\"\" i\n", fn)
		fmt.Fprintf(w, "  for ((i = 2; i < CURRENT; i++)); do\n    case \"${words[i]}\" in\n")
		if len(cmds) > 0 {
			fmt.Fprintf(w, "      %s) cmd=\"${words[i]}\"; break ;;\n", strings.Join(cmds, "|"))
		}
		fmt.Fprintf(w, "      -*) ;;\n      *) break ;;\n    esac\n  done\n")
		fmt.Fprintf(w, "  local -a flags\n  case \"$cmd\" in\n")
		for _, c := range cmdsWithFlags {
			fmt.Fprintf(w, "    %s) flags=(%s) ;;\n", c, strings.Join(names(c), " "))
		}
		fmt.Fprintf(w, "    *) flags=(%s) ;;\n  esac\n", strings.Join(names(""), " "))
		fmt.Fprintf(w, "  if [[ \"$PREFIX\" == -* ]]; then\n    compadd -- $flags\n")
		fmt.Fprintf(w, "  elif [[ \"$cmd\" == help ]]; then\n    compadd -- %s\n", strings.Join(cmds, " "))
		fmt.Fprintf(w, "  elif [[ \"$cmd\" == completion ]]; then\n    compadd -- %s\n", strings.Join(shells(), " "))
		fmt.Fprintf(w, "  elif [[ -z \"$cmd\" && $CURRENT -eq 2 ]]; then\n    compadd -- %s\n    _files\n", strings.Join(cmds, " "))
		fmt.Fprintf(w, "  else\n    _files\n  fi\n}\n")
		fmt.Fprintf(w, "compdef %s %s\n", fn, h.Program)
	case "fish":
		fmt.Fprintf(w, "# fish completion for %[1]s; load with: %[1]s completion fish | source\n", h.Program)
		if len(cmds) > 0 {
			for _, c := range h.Commands {
				if c.Name != "" {
					fmt.Fprintf(w, "complete -c %s -n __fish_use_subcommand -a %s -d %s\n", h.Program, c.Name, fishQuote(c.Summary))
				}
			}
		}
		fmt.Fprintf(w, "complete -c %s -f -n '__fish_seen_subcommand_from help' -a %s\n", h.Program, fishQuote(strings.Join(cmds, " ")))
		fmt.Fprintf(w, "complete -c %s -f -n '__fish_seen_subcommand_from completion' -a %s\n", h.Program, fishQuote(strings.Join(shells(), " ")))
		opt := "-l"
		if h.dash() == "-" {
			opt = "-o"
		}
		for _, f := range slices.Sorted(slices.Values(flags[""])) {
			cond := ""
			if len(cmds) > 0 {
				cond = " -n __fish_use_subcommand"
			}
			fmt.Fprintf(w, "complete -c %s%s %s %s\n", h.Program, cond, opt, f)
		}
		for _, c := range cmdsWithFlags {
			for _, f := range slices.Sorted(slices.Values(flags[c])) {
				fmt.Fprintf(w, "complete -c %s -n '__fish_seen_subcommand_from %s' %s %s\n", h.Program, c, opt, f)
			}
		}
	default:
		return Usagef("completion takes bash, zsh or fish, not %q", shell)
	}
	return nil
}

// fishQuote quotes s for fish, in single quotes.
func fishQuote(s string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(s) + "'"
}

// CompletionCommand is the completion command's entry in a program's help.
func CompletionCommand(program string) Command {
	return Command{
		Name: "completion", Args: strings.Join(shells(), "|"),
		Summary: "print the shell completion script of " + program,
		Examples: []string{
			"source <(" + program + " completion bash)             # in ~/.bashrc",
			"source <(" + program + " completion zsh)              # in ~/.zshrc",
			program + " completion fish > ~/.config/fish/completions/" + program + ".fish",
		},
	}
}

// HelpCommand is the help command's entry in a program's help.
func HelpCommand(program string) Command {
	return Command{Name: "help", Args: "[COMMAND]", Summary: "print the help of " + program + " or of one of its commands",
		Examples: []string{program + " help", program + " help version"}}
}

// VersionCommand is the version command's entry in a program's help.
func VersionCommand(program string) Command {
	return Command{Name: "version", Summary: "print the version, commit, build date and Go release (also: " + program + " --version)",
		Examples: []string{program + " version", program + " version --json"}}
}
