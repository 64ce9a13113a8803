package main

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/tetherdev/tether/github"
	"github.com/tetherdev/tether/state"
	"github.com/tetherdev/tether/sweep"
)

// sweepFlags are shared by run and status.
type sweepFlags struct {
	dryRun     bool
	staleAfter string
	github     bool
	githubSet  bool // --github given either way: it overrides git config
}

func (a *app) runCommand() *cobra.Command {
	var (
		sf            sweepFlags
		quiet, asJSON bool
		hook          string
	)
	c := &cobra.Command{
		Use:   "run",
		Short: "finalize sessions whose agent is gone and save their turns",
		Long: `Finalize the sessions whose agent process is gone (checked again under the
session's lock) and condense their turns into checkpoints. The post-commit hook
and the hook's self-heal run it; status and clean run it first.`,
		Example: `  tether-sweep run
  tether-sweep run --dry-run --stale-after 7d`,
		GroupID: "sessions",
		Args: func(c *cobra.Command, args []string) error {
			if hook == "" {
				return noArgs(c, args)
			}
			return nil // git's own arguments to the hook
		},
		RunE: func(c *cobra.Command, args []string) error {
			sf.githubSet = c.Flags().Changed("github")
			if hook != "" && hook != "post-commit" {
				return a.inheritHook(hook, args, quiet)
			}
			return a.run(sf, quiet, asJSON, hook)
		},
	}
	fs := c.Flags()
	fs.BoolVar(&quiet, "quiet", false, "print nothing unless something went wrong (for git hooks)")
	fs.BoolVar(&asJSON, "json", false, "print the report as JSON")
	fs.StringVar(&hook, "hook", "", "the git hook running this sweep (post-commit, post-merge, post-rewrite, post-checkout)")
	fs.MarkHidden("hook") // for the git hooks tether installs, not for people
	fs.BoolVar(&sf.dryRun, "dry-run", false, "decide and report, change nothing")
	sf.define(fs)
	return c
}

// define adds the sweep policy flags that run and status share.
func (sf *sweepFlags) define(fs *pflag.FlagSet) {
	fs.StringVar(&sf.staleAfter, "stale-after", "", "end sessions of unknown liveness idle this long (e.g. 12h, 7d; git config tether.staleAfter)")
	fs.BoolVar(&sf.github, "github", false, "reconcile stale sessions with GitHub (git config tether.github)")
}

func (a *app) run(sf sweepFlags, quiet, asJSON bool, hook string) error {
	if hook != "" && hook != "post-commit" {
		return usagef("--hook: unknown hook %q (want post-commit)", hook)
	}
	w, err := a.open()
	if err != nil {
		return err
	}
	rep, err := a.sweep(w, sf, hook == "post-commit")
	if hook == "post-commit" {
		a.inheritCommit(w, quiet)
	}
	if err == nil && rep.ConfigErr != nil {
		// The sweep did what it could without the setting; say what is
		// wrong and fail, so the setting gets fixed.
		err = rep.ConfigErr
	}
	if rep.Report != nil && asJSON {
		enc := json.NewEncoder(a.stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(rep.Report); err != nil {
			return err
		}
	} else if rep.Report != nil && !quiet {
		printReport(a, rep.Report, sf.dryRun)
	}
	if err != nil {
		return err
	}
	if quiet {
		for _, warn := range rep.Warnings {
			fmt.Fprintf(a.stderr, "tether-sweep: warning: %s\n", warn)
		}
	}
	return nil
}

// sweepReport is a sweep's report, and the git config setting it had to do
// without.
type sweepReport struct {
	*sweep.Report
	ConfigErr error // a tether.* value that is not valid: the sweep ran without it
}

// sweep runs one sweep with flags falling back to git config. A bad flag is
// a usage error; a bad config value is not the command line's fault: the
// sweep runs without it (no stale-after policy) and reports it in
// ConfigErr.
func (a *app) sweep(w *workspace, sf sweepFlags, postCommit bool) (sweepReport, error) {
	var staleAfter time.Duration
	var configErr error
	if sf.staleAfter != "" {
		d, err := state.ParseAge(sf.staleAfter)
		if err != nil {
			return sweepReport{}, usagef("--stale-after: %v", err)
		}
		staleAfter = d
	} else if v := a.gitConfig(w.repo, "staleAfter"); v != "" {
		d, err := state.ParseAge(v)
		if err != nil {
			configErr = fmt.Errorf("git config tether.staleAfter: %v; sessions of unknown liveness are not ended by age until it is fixed", err)
		}
		staleAfter = d
	}
	opts := sweep.Options{StaleAfter: staleAfter, DryRun: sf.dryRun, PostCommit: postCommit}
	// git config turns GitHub on for every sweep but the post-commit one:
	// a commit must not wait on the network unless asked to with --github.
	if sf.github || !sf.githubSet && !postCommit && configBool(a.gitConfig(w.repo, "github")) {
		opts.GitHub = a.githubOptions()
	}
	rep, err := sweep.Run(w.repo, w.store, opts)
	if err == nil && !opts.DryRun {
		a.notifyEnded(w, rep)
	}
	return sweepReport{Report: rep, ConfigErr: configErr}, err
}

func printReport(a *app, rep *sweep.Report, dryRun bool) {
	verb := "finalized"
	if dryRun {
		verb = "would finalize"
	}
	notes := map[string]string{} // what GitHub said, by session
	var ids []string             // the sessions the report names
	for _, g := range rep.GitHub {
		notes[g.ID] = g.Note
		ids = append(ids, g.ID)
	}
	for _, t := range rep.Finalized {
		ids = append(ids, t.ID)
	}
	for _, c := range rep.Checkpoints {
		ids = append(ids, c.Session)
	}
	short := shortIDs(ids)
	for _, t := range rep.Finalized {
		reason := ending{reason: t.Reason, agent: t.Agent, github: notes[t.ID]}.words()
		delete(notes, t.ID)
		fmt.Fprintf(a.stdout, "%s %s (%s): %s — %s\n", verb, short[t.ID], t.Agent, reason, t.Owner)
	}
	for _, g := range rep.GitHub {
		if n := notes[g.ID]; n != "" {
			fmt.Fprintf(a.stdout, "github %s: %s\n", short[g.ID], n)
		}
	}
	for _, c := range rep.Checkpoints {
		if c.Checkpoint == "" {
			continue
		}
		note := ""
		if c.Skipped {
			note = " (already stored)"
		}
		fmt.Fprintf(a.stdout, "checkpoint %s: session %s, %s%s\n", c.Checkpoint, short[c.Session], count(c.Turns, "turn", "turns"), note)
	}
	if len(rep.Linked) > 0 {
		fmt.Fprintf(a.stdout, "linked %s to %s\n", count(len(rep.Linked), "checkpoint", "checkpoints"), shortID(rep.Head))
	}
	for _, w := range rep.Warnings {
		fmt.Fprintf(a.stderr, "warning: %s\n", w)
	}
	if len(rep.Finalized) == 0 && len(rep.Checkpoints) == 0 && len(rep.Linked) == 0 && len(rep.GitHub) == 0 {
		fmt.Fprintf(a.stdout, "nothing to sweep (%s)\n", count(len(rep.Sessions), "live session", "live sessions"))
	}
}

// githubOptions is how the sweep reaches GitHub: the token from the
// environment or gh.
func (a *app) githubOptions() *sweep.GitHubOptions {
	return &sweep.GitHubOptions{Token: func(ctx context.Context, host string) (string, error) {
		return github.Token(ctx, host, a.getenv, github.GHAuthToken)
	}}
}
