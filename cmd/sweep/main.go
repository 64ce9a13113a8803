// Command tether-sweep finalizes agent sessions whose owner is gone,
// condenses their turns into checkpoints, and is the operator's
// window onto tether's state. Each subcommand lives in its own file; cobra
// gives them help, shell completion and suggestions, with pflag flags.
package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"
)

// Command groups, in the order help lists them.
var groups = []*cobra.Group{
	{ID: "sessions", Title: "Sessions:"},
	{ID: "checkpoints", Title: "Checkpoints:"},
	{ID: "setup", Title: "Setup:"},
}

// commands lists the subcommands in the order help shows them within their
// groups. Running tether-sweep with none lists them; the sweep itself is
// `run`, which is what the git hooks and the hook's self-heal call.
func (a *app) commands() []*cobra.Command {
	return []*cobra.Command{
		a.statusCommand(), a.runCommand(), a.endCommand(), a.linkCommand(), a.resumeCommand(), a.rewindCommand(), a.cleanCommand(),
		a.showCommand(), a.pushCommand(), a.fetchCommand(),
		a.installCommand(), a.uninstallCommand(), a.doctorCommand(), a.versionCommand(), a.notifyCommand(),
	}
}

func init() {
	cobra.EnableCommandSorting = false // commands() is the order that reads well
}

// app carries what a subcommand needs from its surroundings, so that tests
// run the CLI in-process with their own streams and directory.
type app struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	dir            string // working directory
	getenv         func(string) string
}

// usageError marks a bad invocation: exit code 2.
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error { return usageError{fmt.Sprintf(format, args...)} }

// errSilent ends a command with exit status 1 after it has said what it
// needed to say itself.
var errSilent = errors.New("silent failure")

func main() {
	dir, err := os.Getwd()
	if err != nil {
		fmt.Fprintf(os.Stderr, "tether-sweep: %v\n", err)
		os.Exit(1)
	}
	a := &app{stdin: os.Stdin, stdout: os.Stdout, stderr: os.Stderr, dir: dir, getenv: os.Getenv}
	os.Exit(a.main(os.Args[1:]))
}

// main runs one command line and maps its outcome to an exit code: 0 ok,
// 1 error, 2 usage. Anything cobra refuses before a command starts (an
// unknown flag or command, a wrong number of arguments) is a usage error.
func (a *app) main(args []string) int {
	root := a.rootCommand(args)
	started := false
	root.PersistentPreRun = func(*cobra.Command, []string) { started = true }
	root.SetArgs(args)
	cmd, err := root.ExecuteC()
	var ue usageError
	switch {
	case err == nil:
		return 0
	case errors.Is(err, errSilent):
		return 1
	case errors.As(err, &ue) || !started:
		fmt.Fprintf(a.stderr, "%s: %v\n", cmd.CommandPath(), err)
		return 2
	default:
		fmt.Fprintf(a.stderr, "%s: %v\n", cmd.CommandPath(), err)
		return 1
	}
}

// rootCommand builds the command tree afresh, writing to the app's streams.
func (a *app) rootCommand(args []string) *cobra.Command {
	root := &cobra.Command{
		Use:   "tether-sweep",
		Short: "keep an honest record of AI coding-agent sessions",
		Long: `tether-sweep ends agent sessions whose process is gone, saves their turns as
checkpoints under refs/tether/ (not a branch), links them to the commits they
produced, and shows, resumes and cleans up sessions. Agents record sessions
through tether-hook; tether-sweep install sets that up.`,
		Version: version(),
		// A bare tether-sweep lists the commands; an unknown one is a
		// usage error naming the nearest.
		Args: func(c *cobra.Command, args []string) error {
			if len(args) == 0 {
				return nil
			}
			return unknownCommand(c, args[0])
		},
		RunE:          func(c *cobra.Command, _ []string) error { return c.Help() },
		SilenceErrors: true,
		SilenceUsage:  true,
	}
	root.SetIn(a.stdin)
	root.SetOut(a.stdout)
	root.SetErr(a.stderr)
	root.SetUsageFunc(usage)
	root.SetVersionTemplate("tether-sweep {{.Version}}\n")
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		// Flags reach the root's parser only when no command matched: an
		// unknown command word is the mistake to name, not a flag that
		// was meant for it (tether-sweep statsu --json).
		if !c.HasParent() {
			if word := commandWord(args); word != "" {
				return unknownCommand(c, word)
			}
		}
		return usageError{err.Error()}
	})
	root.Flags().BoolP("version", "v", false, "print the version")
	root.AddGroup(groups...)
	root.SetHelpCommandGroupID("setup")
	root.SetCompletionCommandGroupID("setup")
	for _, c := range a.commands() {
		c.Flags().SortFlags = false
		root.AddCommand(c)
	}
	// cobra's own two, worded like the rest.
	root.InitDefaultCompletionCmd()
	root.InitDefaultHelpCmd()
	for _, c := range root.Commands() {
		switch c.Name() {
		case "completion":
			c.Short = "print a completion script for bash, zsh, fish or powershell"
		case "help":
			c.Short = "show help for a command"
		}
	}
	return root
}

// usage is every command's usage text: how to call it, an example, its own
// flags, and for tether-sweep itself the commands by group.
func usage(c *cobra.Command) error {
	var b strings.Builder
	b.WriteString("Usage:\n")
	switch {
	case !c.HasParent():
		fmt.Fprintf(&b, "  %s <command> [flags]\n", c.CommandPath())
	case c.HasAvailableSubCommands():
		fmt.Fprintf(&b, "  %s <command>\n", c.CommandPath())
	default:
		fmt.Fprintf(&b, "  %s\n", c.UseLine())
	}
	if c.HasExample() {
		fmt.Fprintf(&b, "\nExamples:\n%s\n", strings.TrimRight(c.Example, "\n"))
	}
	if c.HasAvailableSubCommands() {
		width := 0
		for _, sub := range c.Commands() {
			width = max(width, len(sub.Name()))
		}
		listed := func(title, group string) {
			var lines []string
			for _, sub := range c.Commands() {
				if sub.GroupID == group && (sub.IsAvailableCommand() || sub.Name() == "help") {
					lines = append(lines, fmt.Sprintf("  %-*s  %s\n", width, sub.Name(), sub.Short))
				}
			}
			if len(lines) > 0 {
				fmt.Fprintf(&b, "\n%s\n%s", title, strings.Join(lines, ""))
			}
		}
		for _, g := range c.Groups() {
			listed(g.Title, g.ID)
		}
		listed("Commands:", "")
	}
	if c.HasAvailableLocalFlags() {
		fmt.Fprintf(&b, "\nFlags:\n%s", c.LocalFlags().FlagUsages())
	}
	if c.HasAvailableSubCommands() {
		fmt.Fprintf(&b, "\nRun '%s <command> --help' for a command's flags and examples.\n", c.CommandPath())
	}
	_, err := io.WriteString(c.OutOrStderr(), b.String())
	return err
}
