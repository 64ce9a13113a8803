package main

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"

	"github.com/spf13/pflag"

	"github.com/tetherdev/tether/install"
)

func cmdInstall(a *app, args []string) error {
	opts, err := a.installOptions("install", args, true)
	if err != nil {
		return err
	}
	if _, err := a.open(); err != nil {
		return err // not a repository: say so plainly, not in git's words
	}
	res, err := install.Install(opts)
	printInstallResult(a, res)
	return err
}

func cmdUninstall(a *app, args []string) error {
	opts, err := a.installOptions("uninstall", args, false)
	if err != nil {
		return err
	}
	if _, err := a.open(); err != nil {
		return err // not a repository: say so plainly, not in git's words
	}
	res, err := install.Uninstall(opts)
	printInstallResult(a, res)
	return err
}

// installOptions parses the flags of install and uninstall.
func (a *app) installOptions(name string, args []string, forInstall bool) (install.Options, error) {
	fs := a.newFlags(name)
	f := addInstallFlags(fs, forInstall)
	if err := parse(fs, args); err != nil {
		return install.Options{}, err
	}
	if fs.NArg() > 0 {
		return install.Options{}, usagef("unexpected argument %q", fs.Arg(0))
	}
	return a.options(fs, f)
}

// installFlags are the flags install, uninstall and doctor share, so that
// doctor checks exactly what an install with the same flags would set up.
type installFlags struct {
	agents                    *[]string
	user, push, noGit, onPath *bool
}

// addInstallFlags defines the shared flags on fs; withPush shows --push in
// the help (uninstall removes the pre-push hook whether asked or not).
func addInstallFlags(fs *pflag.FlagSet, withPush bool) installFlags {
	f := installFlags{
		agents: fs.StringSlice("agent", nil, "agents to configure: "+strings.Join(install.AgentNames(), ", ")+", or none (default: the agents whose config dir exists, else claude-code)"),
		user:   fs.Bool("user", false, "configure the agents at user level instead of in this project"),
		push:   fs.Bool("push", false, "also install a pre-push hook that shares checkpoints"),
		noGit:  fs.Bool("no-git-hooks", false, "leave the git hooks alone"),
		onPath: fs.Bool("path", false, "write commands that find tether on PATH instead of absolute paths"),
	}
	if !withPush {
		fs.MarkHidden("push")
	}
	return f
}

// options turns the parsed shared flags into install.Options. An agent
// tether does not know is a usage error, found before anything changes.
func (a *app) options(fs *pflag.FlagSet, f installFlags) (install.Options, error) {
	opts := install.Options{Dir: a.dir, User: *f.user, Push: *f.push, NoGitHooks: *f.noGit}
	if fs.Changed("agent") {
		opts.Agents = []string{}
		for _, ag := range *f.agents {
			switch {
			case ag == "none":
			case slices.Contains(install.AgentNames(), ag):
				opts.Agents = append(opts.Agents, ag)
			default:
				return install.Options{}, usagef("--agent: unknown agent %q (known: %s, none)", ag, strings.Join(install.AgentNames(), ", "))
			}
		}
	}
	opts.Home = a.getenv("HOME")
	if opts.Home == "" {
		opts.Home, _ = os.UserHomeDir()
	}
	if !*f.onPath {
		opts.HookPath, opts.SweepPath = siblingBinaries()
	}
	return opts, nil
}

// siblingBinaries are tether-hook and tether-sweep next to this executable,
// when both are there; otherwise the hooks find them on PATH.
func siblingBinaries() (hook, sweep string) {
	exe, err := os.Executable()
	if err != nil {
		return "", ""
	}
	if resolved, err := filepath.EvalSymlinks(exe); err == nil {
		exe = resolved
	}
	suffix := ""
	if runtime.GOOS == "windows" {
		suffix = ".exe"
	}
	hook = filepath.Join(filepath.Dir(exe), "tether-hook"+suffix)
	if _, err := os.Stat(hook); err != nil {
		return "", ""
	}
	if !strings.HasPrefix(filepath.Base(exe), "tether-sweep") {
		// Running inside a test binary: the hooks must call a real sweep.
		return hook, ""
	}
	return hook, exe
}

func printInstallResult(a *app, res install.Result) {
	for _, c := range res.Changes {
		if c.Action == install.Unchanged {
			fmt.Fprintf(a.stdout, "  unchanged  %s (%s)\n", c.What, c.Path)
			continue
		}
		fmt.Fprintf(a.stdout, "  %-9s  %s (%s)\n", c.Action, c.What, c.Path)
	}
	for _, m := range res.Manual {
		fmt.Fprintf(a.stdout, "\n%s manages your %s hook: add this to %s\n\n%s\n", filepath.Base(m.File), m.Hook, m.File, indent(m.Snippet))
		if m.Then != "" {
			fmt.Fprintf(a.stdout, "then run: %s\n", m.Then)
		}
	}
	for _, n := range res.Notes {
		fmt.Fprintf(a.stdout, "note: %s\n", n)
	}
}

func indent(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	for i, l := range lines {
		lines[i] = "    " + l
	}
	return strings.Join(lines, "\n")
}
