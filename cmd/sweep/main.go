// Command tether-sweep finalizes agent sessions whose owner is gone,
// condenses their turns into the checkpoints branch, and is the operator's
// window onto tether's state. Each subcommand lives in its own file.
package main

import (
	"errors"
	"fmt"
	"io"
	"os"
)

// command is one subcommand: its name, a one-line summary and its entry point.
type command struct {
	name    string
	summary string
	run     func(a *app, args []string) error
}

// commands lists the subcommands in the order help shows them. "run" is the
// default when none is named.
func commands() []command {
	return []command{
		{"run", "finalize sessions whose agent is gone and condense their turns", cmdRun},
		{"status", "sweep, then list sessions", cmdStatus},
		{"end", "end a session by hand", cmdEnd},
		{"link", "link a session to a GitHub issue or pull request", cmdLink},
		{"resume", "list interrupted sessions, or resume one", cmdResume},
		{"show", "show the checkpoints of a commit, or one checkpoint", cmdShow},
		{"clean", "remove ended sessions whose turns are all saved", cmdClean},
		{"push", "share checkpoints and notes with a remote", cmdPush},
		{"fetch", "fetch a remote's checkpoints and notes and merge them", cmdFetch},
		{"install", "install git hooks and agent hook configs", cmdInstall},
		{"uninstall", "remove exactly what install added", cmdUninstall},
		{"doctor", "check the installation and the store; --fix repairs what it safely can", cmdDoctor},
		{"version", "print the version", cmdVersion},
	}
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

// main dispatches to a subcommand and maps its error to an exit code:
// 0 ok, 1 error, 2 usage.
func (a *app) main(args []string) int {
	name := "run"
	if len(args) > 0 && len(args[0]) > 0 && args[0][0] != '-' {
		name, args = args[0], args[1:]
	}
	if name == "help" {
		a.help()
		return 0
	}
	for _, c := range commands() {
		if c.name != name {
			continue
		}
		err := c.run(a, args)
		var ue usageError
		switch {
		case err == nil, errors.Is(err, errHelp):
			return 0
		case errors.Is(err, errSilent):
			return 1
		case errors.As(err, &ue):
			fmt.Fprintf(a.stderr, "tether-sweep %s: %s\n", name, ue.msg)
			return 2
		default:
			fmt.Fprintf(a.stderr, "tether-sweep %s: %v\n", name, err)
			return 1
		}
	}
	fmt.Fprintf(a.stderr, "tether-sweep: unknown command %q (see tether-sweep help)\n", name)
	return 2
}

func (a *app) help() {
	fmt.Fprintln(a.stdout, "usage: tether-sweep [command] [flags]")
	fmt.Fprintln(a.stdout)
	for _, c := range commands() {
		fmt.Fprintf(a.stdout, "  %-10s %s\n", c.name, c.summary)
	}
}
