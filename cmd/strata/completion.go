package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
)

// completionShells are the shells 'strata completion' writes a script for.
var completionShells = []string{"bash", "zsh", "fish"}

const completionUsage = `Usage: strata completion bash|zsh|fish

Prints a script that completes strata's commands, subcommands and flags.
Load it for the current shell or install it for every new one:

  bash:  source <(strata completion bash)
         strata completion bash > ~/.local/share/bash-completion/completions/strata
  zsh:   strata completion zsh > "${fpath[1]}/_strata"   (then restart zsh)
  fish:  strata completion fish > ~/.config/fish/completions/strata.fish`

// runCompletion prints the completion script of one shell. The scripts
// are made from the command table and from each command's own flag set,
// so they list what this build of strata accepts.
func runCompletion(ctx context.Context, m *Main, args []string) error {
	if slices.ContainsFunc(args, isHelpFlag) {
		m.printHelp("completion", completionUsage)
		return flag.ErrHelp
	}
	if len(args) == 0 {
		return usagef("completion: name a shell: strata completion bash|zsh|fish")
	}
	if len(args) > 1 {
		return usagef("completion: want one shell, got %q", args)
	}
	spec, err := completionSpec(ctx)
	if err != nil {
		return err
	}
	switch args[0] {
	case "bash":
		_, err = io.WriteString(m.Stdout, spec.bash())
	case "zsh":
		_, err = io.WriteString(m.Stdout, spec.zsh())
	case "fish":
		_, err = io.WriteString(m.Stdout, spec.fish())
	default:
		return usagef("completion: unknown shell %q (want bash, zsh or fish)", args[0])
	}
	return err
}

// completeFlag is one flag as a completion script offers it.
type completeFlag struct {
	name  string // without dashes
	usage string // its help, on one line
	value bool   // takes a value (not a boolean flag)
}

// dashed is the flag as typed: -k for one letter, --name otherwise (the
// flag package accepts either).
func (f completeFlag) dashed() string {
	if len(f.name) == 1 {
		return "-" + f.name
	}
	return "--" + f.name
}

// completeCommand is one command as a completion script offers it.
type completeCommand struct {
	command
	flags []completeFlag
}

type completions struct{ commands []completeCommand }

// completionSpec reads every command's flags by asking it for its help
// (and each subcommand's) with the flag sets collected, so that nothing
// is listed twice in the source.
func completionSpec(ctx context.Context) (completions, error) {
	var spec completions
	for _, c := range commands() {
		cc := completeCommand{command: c}
		if c.name != "help" && c.name != "completion" {
			fl, err := commandFlags(ctx, c)
			if err != nil {
				return spec, err
			}
			cc.flags = fl
		}
		spec.commands = append(spec.commands, cc)
	}
	return spec, nil
}

// commandFlags runs c with -h (and each subcommand with -h) on a Main
// that collects the flag sets parsed and writes nowhere, and returns
// their flags, by name.
func commandFlags(ctx context.Context, c command) ([]completeFlag, error) {
	var sets []*flag.FlagSet
	probe := &Main{Stdin: strings.NewReader(""), Stdout: io.Discard, Stderr: io.Discard,
		Getenv: func(string) string { return "" }, flagSets: &sets}
	asks := [][]string{{"-h"}}
	for _, s := range c.subs {
		asks = append(asks, []string{s, "-h"})
	}
	for _, args := range asks {
		if err := c.run(ctx, probe, args); !errors.Is(err, flag.ErrHelp) {
			return nil, fmt.Errorf("completion: strata %s %s did not answer with its help (%v)", c.name, strings.Join(args, " "), err)
		}
	}
	byName := map[string]completeFlag{}
	for _, fs := range sets {
		fs.VisitAll(func(f *flag.Flag) {
			bf, ok := f.Value.(interface{ IsBoolFlag() bool })
			byName[f.Name] = completeFlag{name: f.Name, usage: oneLineUsage(f.Usage), value: !(ok && bf.IsBoolFlag())}
		})
	}
	out := make([]completeFlag, 0, len(byName))
	for _, f := range byName {
		out = append(out, f)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out, nil
}

// oneLineUsage is a flag's help as a completion menu shows it: one line,
// at most 100 characters.
func oneLineUsage(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 100 {
		cut := strings.LastIndexByte(s[:100], ' ')
		if cut < 60 {
			cut = 100
		}
		s = s[:cut] + "..."
	}
	return s
}

// names returns the commands' names, space-separated.
func (s completions) names() string {
	ns := make([]string, len(s.commands))
	for i, c := range s.commands {
		ns[i] = c.name
	}
	return strings.Join(ns, " ")
}

// subsOf is what completes the word after a command: its subcommands; for
// help, every command; for completion, the shells.
func (s completions) subsOf(c completeCommand) string {
	if c.name == "help" {
		return s.names()
	}
	return strings.Join(c.subs, " ")
}

// bash is the bash script: COMPREPLY from compgen word lists, and bash's
// default (file names) for a flag's value or an argument.
func (s completions) bash() string {
	var b strings.Builder
	b.WriteString(`# bash completion for strata: source <(strata completion bash)
_strata() {
    local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]}
    COMPREPLY=()
    if ((COMP_CWORD == 1)); then
        COMPREPLY=($(compgen -W "` + s.names() + `" -- "$cur"))
        return
    fi
    local subs= flags= valued=
    case ${COMP_WORDS[1]} in
`)
	for _, c := range s.commands {
		var flags, valued []string
		for _, f := range c.flags {
			flags = append(flags, f.dashed())
			if f.value {
				valued = append(valued, f.dashed())
			}
		}
		fmt.Fprintf(&b, "    %s)\n", c.name)
		if subs := s.subsOf(c); subs != "" {
			fmt.Fprintf(&b, "        subs=%q\n", subs)
		}
		fmt.Fprintf(&b, "        flags=%q\n        valued=%q\n        ;;\n", strings.Join(flags, " "), strings.Join(valued, " "))
	}
	b.WriteString(`    *) return ;;
    esac
    if ((COMP_CWORD == 2)) && [[ -n $subs && $cur != -* ]]; then
        COMPREPLY=($(compgen -W "$subs" -- "$cur"))
        return
    fi
    case " $valued " in
    *" $prev "*) return ;;
    esac
    if [[ $cur == -* ]]; then
        COMPREPLY=($(compgen -W "$flags" -- "$cur"))
    fi
}
complete -o default -F _strata strata
`)
	return b.String()
}

// zshQuote quotes s for zsh in single quotes.
func zshQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// zshBracket escapes s for the [description] of an _arguments spec.
func zshBracket(s string) string {
	return strings.NewReplacer(`\`, `\\`, `[`, `\[`, `]`, `\]`, `:`, `\:`).Replace(s)
}

// zsh is the zsh script: _describe for commands, _arguments for flags.
func (s completions) zsh() string {
	var b strings.Builder
	b.WriteString("#compdef strata\n# zsh completion for strata: strata completion zsh > \"${fpath[1]}/_strata\"\n\n_strata() {\n    local -a commands subs flags\n    commands=(\n")
	for _, c := range s.commands {
		fmt.Fprintf(&b, "        %s\n", zshQuote(strings.ReplaceAll(c.name, ":", `\:`)+":"+oneLineUsage(c.summary)))
	}
	b.WriteString(`    )
    if (( CURRENT == 2 )); then
        _describe -t commands 'strata command' commands
        return
    fi
    case $words[2] in
`)
	for _, c := range s.commands {
		fmt.Fprintf(&b, "    %s)\n", c.name)
		if c.name == "help" {
			b.WriteString("        (( CURRENT == 3 )) && _describe -t commands 'strata command' commands\n        return\n        ;;\n")
			continue
		}
		if len(c.subs) > 0 {
			fmt.Fprintf(&b, "        subs=(%s)\n", strings.Join(c.subs, " "))
		}
		b.WriteString("        flags=(\n")
		for _, f := range c.flags {
			spec := f.dashed()
			if f.value {
				spec += "=[" + zshBracket(f.usage) + "]:" + f.name + ":_default"
			} else {
				spec += "[" + zshBracket(f.usage) + "]"
			}
			fmt.Fprintf(&b, "            %s\n", zshQuote(spec))
		}
		b.WriteString("        )\n        ;;\n")
	}
	b.WriteString(`    *) return 1 ;;
    esac
    if (( CURRENT == 3 && ${#subs} )) && [[ $PREFIX != -* ]]; then
        compadd -a subs
        return
    fi
    _arguments -S $flags '*:file:_files'
}

if [ "$funcstack[1]" = "_strata" ]; then
    _strata "$@"
else
    compdef _strata strata
fi
`)
	return b.String()
}

// fishQuote quotes s for fish in single quotes.
func fishQuote(s string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(s) + "'"
}

// fish is the fish script: one complete line per command, subcommand and
// flag, conditioned on the command word.
func (s completions) fish() string {
	var b strings.Builder
	b.WriteString(`# fish completion for strata: strata completion fish > ~/.config/fish/completions/strata.fish
function __strata_using
    set -l words (commandline -opc)
    test (count $words) -ge 2; and contains -- $words[2] $argv
end
function __strata_word
    test (count (commandline -opc)) -eq $argv[1]
end
complete -c strata -e
`)
	for _, c := range s.commands {
		fmt.Fprintf(&b, "complete -c strata -f -n '__strata_word 1' -a %s -d %s\n", c.name, fishQuote(oneLineUsage(c.summary)))
	}
	for _, c := range s.commands {
		if subs := s.subsOf(c); subs != "" {
			fmt.Fprintf(&b, "complete -c strata -f -n '__strata_using %s; and __strata_word 2' -a %s\n", c.name, fishQuote(subs))
		}
		for _, f := range c.flags {
			opt := "-l " + f.name
			if len(f.name) == 1 {
				opt = "-s " + f.name
			}
			if f.value {
				opt += " -r"
			}
			fmt.Fprintf(&b, "complete -c strata -n '__strata_using %s' %s -d %s\n", c.name, opt, fishQuote(f.usage))
		}
	}
	return b.String()
}
