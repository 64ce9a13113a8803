package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/tetherdev/tether/install"
)

func (a *app) installCommand() *cobra.Command {
	var f installFlags
	c := &cobra.Command{
		Use:   "install",
		Short: "install git hooks and agent hook configs",
		Long: `Install tether's git hooks (post-commit; pre-push with --push) and the hook
configs of the agents that call tether-hook: by default the agents whose config
directory exists here, else Claude Code. Your own hooks and settings are kept;
uninstall removes exactly what install added. Running it again changes nothing.`,
		Example: `  tether-sweep install
  tether-sweep install --agent claude-code,codex --user
  tether-sweep install --push`,
		GroupID: "setup",
		Args:    noArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			_, _, err := a.runSetup(c, f, install.Install)
			if err == nil {
				a.registerRepo() // for status --all-repos
			}
			return err
		},
	}
	f.define(c.Flags(), "install")
	return c
}

func (a *app) uninstallCommand() *cobra.Command {
	var f installFlags
	c := &cobra.Command{
		Use:   "uninstall",
		Short: "remove exactly what install added",
		Long: `Remove the git hooks and agent hook entries that install added, putting back
what was there before. Checkpoints, notes and recorded sessions stay.`,
		Example: `  tether-sweep uninstall
  tether-sweep uninstall --agent codex --user`,
		GroupID: "setup",
		Args:    noArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			opts, res, err := a.runSetup(c, f, install.Uninstall)
			if err == nil && len(res.Changes) == 0 && len(res.Manual) == 0 && len(res.Notes) == 0 {
				where := "in this repository"
				if opts.User {
					where = "in your user-level agent configs"
				}
				if res.Chosen {
					fmt.Fprintf(a.stdout, "nothing to remove: tether does not record %s %s; doctor will not ask to set it up\n", strings.Join(res.Agents, ", "), where)
				} else {
					fmt.Fprintf(a.stdout, "nothing to remove: tether is not installed %s\n", where)
				}
			}
			return err
		},
	}
	f.define(c.Flags(), "uninstall")
	return c
}

// runSetup runs install or uninstall with the command's flags, in a
// repository, and prints what it did.
func (a *app) runSetup(c *cobra.Command, f installFlags, op func(install.Options) (install.Result, error)) (install.Options, install.Result, error) {
	opts, err := a.options(c.Flags(), f)
	if err != nil {
		return opts, install.Result{}, err
	}
	if _, err := a.open(); err != nil {
		return opts, install.Result{}, err // not a repository: say so plainly, not in git's words
	}
	res, err := op(opts)
	if errors.Is(err, install.ErrNotSetUp) {
		return opts, res, usageError{err.Error()}
	}
	printInstallResult(a, res, c.Name() == "install")
	return opts, res, err
}

// installFlags are the flags install, uninstall and doctor share, so that
// doctor checks exactly what an install with the same flags would set up.
type installFlags struct {
	agents                           []string
	user, push, noGit, onPath, trust bool
}

// define adds the shared flags to fs, worded for the command that has them.
// uninstall removes the pre-push hook whether asked or not, and finds its
// entries whichever paths they hold, so it has no --push or --path.
func (f *installFlags) define(fs *pflag.FlagSet, cmd string) {
	known := strings.Join(install.AgentNames(), ", ")
	switch cmd {
	case "uninstall":
		fs.StringSliceVar(&f.agents, "agent", nil, "agents whose hooks to remove: "+known+" (default: all)")
		fs.BoolVar(&f.user, "user", false, "remove them from the user-level configs instead of this project's")
		fs.BoolVar(&f.noGit, "no-git-hooks", false, "leave the git hooks alone")
		return
	case "doctor":
		fs.StringSliceVar(&f.agents, "agent", nil, "agents to check: "+known+", or none (default: as install chooses)")
		fs.BoolVar(&f.user, "user", false, "check the user-level configs instead of this project's")
		fs.BoolVar(&f.push, "push", false, "check the pre-push hook too")
		fs.BoolVar(&f.noGit, "no-git-hooks", false, "do not check the git hooks")
		fs.BoolVar(&f.onPath, "path", false, "expect commands that find tether on PATH")
		fs.BoolVar(&f.trust, "trust", false, "with --fix, trust tether's own Codex hook entries")
		return
	}
	fs.StringSliceVar(&f.agents, "agent", nil, "agents to configure: "+known+", or none (default: the agents whose config dir exists, else claude-code)")
	fs.BoolVar(&f.user, "user", false, "configure the agents at user level instead of in this project")
	fs.BoolVar(&f.push, "push", false, "also install a pre-push hook that shares checkpoints")
	fs.BoolVar(&f.noGit, "no-git-hooks", false, "leave the git hooks alone")
	fs.BoolVar(&f.onPath, "path", false, "write commands that find tether on PATH instead of absolute paths")
	fs.BoolVar(&f.trust, "trust", false, "trust tether's own Codex hook entries (Codex skips untrusted hooks): writes their hashes into Codex's config.toml")
}

// options turns the parsed shared flags into install.Options. An agent
// tether does not know is a usage error, found before anything changes.
func (a *app) options(fs *pflag.FlagSet, f installFlags) (install.Options, error) {
	opts := install.Options{Dir: a.dir, User: f.user, Push: f.push, NoGitHooks: f.noGit, Trust: f.trust, Getenv: a.getenv}
	if fs.Changed("agent") {
		opts.Agents = []string{}
		for _, ag := range f.agents {
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
	if !f.onPath {
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

func printInstallResult(a *app, res install.Result, installing bool) {
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
	if installing {
		printAgents(a.stdout, res)
	}
	if len(res.Commit) > 0 {
		fmt.Fprintf(a.stdout, "commit %s: teammates who install tether then record too (the hooks find tether-hook on PATH, and do nothing where it is absent)\n", strings.Join(res.Commit, " "))
	}
	if installing && len(res.Personal) > 0 {
		fmt.Fprintf(a.stdout, "yours alone, never committed: %s (each clone runs tether-sweep install once)\n", strings.Join(res.Personal, " "))
	}
	for _, n := range res.Notes {
		fmt.Fprintf(a.stdout, "note: %s\n", n)
	}
}

// printAgents says which agents install set up and why, which it found
// and left, and how to add one.
func printAgents(w io.Writer, res install.Result) {
	if len(res.Agents) == 0 && len(res.Found) == 0 {
		return
	}
	where := map[string]string{}
	for _, p := range res.Found {
		where[p.Agent] = strings.Join(p.Where, ", ")
	}
	var set []string
	for _, ag := range res.Agents {
		if wh := where[ag]; wh != "" {
			ag += " (" + wh + ")"
		}
		set = append(set, ag)
	}
	switch {
	case res.Chosen && len(set) > 0:
		fmt.Fprintf(w, "agents set up, as asked: %s\n", strings.Join(set, ", "))
	case len(res.Found) > 0:
		fmt.Fprintf(w, "agents found on this machine, set up: %s\n", strings.Join(set, ", "))
	case len(set) > 0:
		fmt.Fprintf(w, "no coding agent found on this machine (no config directory, none on PATH): set up %s; pick others with --agent\n", strings.Join(set, ", "))
	}
	for _, ag := range res.Unset {
		fmt.Fprintf(w, "also on this machine, not set up: %s (%s); add it with: tether-sweep install --agent %s\n", ag, where[ag], ag)
	}
	if !res.Chosen && len(res.Found) > 0 {
		var absent []string
		for _, ag := range install.AgentNames() {
			if where[ag] == "" && !slices.Contains(res.Agents, ag) {
				absent = append(absent, ag)
			}
		}
		if len(absent) > 0 {
			fmt.Fprintf(w, "not found, so not set up: %s; add one anyway with: tether-sweep install --agent NAME\n", strings.Join(absent, ", "))
		}
	}
}

func indent(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	for i, l := range lines {
		lines[i] = "    " + l
	}
	return strings.Join(lines, "\n")
}
