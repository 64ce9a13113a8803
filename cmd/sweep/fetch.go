package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/tetherdev/tether/checkpoint"
)

func (a *app) fetchCommand() *cobra.Command {
	var quiet, asJSON, verbose bool
	c := &cobra.Command{
		Use:   "fetch [REMOTE]",
		Short: "fetch a remote's checkpoints and notes and merge them",
		Long: `Fetch a remote's checkpoints branch and notes (the current branch's remote,
else origin) into tracking refs, and merge them into ours as a union.`,
		Example: `  tether-sweep fetch
  tether-sweep fetch upstream --json`,
		GroupID: "checkpoints",
		Args:    maxArgs(1, "fetch takes at most one REMOTE"),
		RunE:    func(_ *cobra.Command, args []string) error { return a.fetch(args, quiet, asJSON, verbose) },
	}
	c.Flags().BoolVar(&quiet, "quiet", false, "print nothing unless something went wrong")
	c.Flags().BoolVar(&asJSON, "json", false, "print the result as JSON")
	c.Flags().BoolVarP(&verbose, "verbose", "v", false, "when git fails, print all it said")
	return c
}

// fetch brings a remote's checkpoints branch and notes into their tracking
// refs and merges them into ours.
func (a *app) fetch(args []string, quiet, asJSON, verbose bool) error {
	w, cp, err := a.openCheckpoints()
	if err != nil {
		return err
	}
	remote := ""
	if len(args) > 0 {
		remote = args[0]
	}
	if remote == "" {
		remote = defaultRemote(w.repo)
	}
	res, err := cp.Fetch(w.store, remote)
	a.gitSaid(w.store, "fetch", remote, err, verbose)
	warnings := conflictWarnings(res.Conflicts)
	if asJSON {
		branch, notes := checkpoint.TrackingRefs(remote)
		if jerr := writeJSON(a.stdout, struct {
			checkpoint.FetchResult
			TrackingBranch string   `json:"tracking_branch"`
			TrackingNotes  string   `json:"tracking_notes"`
			Warnings       []string `json:"warnings"`
		}{res, branch.String(), notes.String(), nonNil(warnings)}); jerr != nil && err == nil {
			err = jerr
		}
	} else if !quiet && err == nil {
		if res.Empty {
			fmt.Fprintf(a.stdout, "nothing to fetch: %s has no checkpoints\n", remote)
		} else {
			fmt.Fprintf(a.stdout, "fetched checkpoints from %s: branch %s, notes %s\n", remote, res.Branch, res.Notes)
		}
	}
	printWarnings(a, warnings, quiet)
	return err
}
