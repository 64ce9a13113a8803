package main

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/tetherdev/tether/state"
	"github.com/tetherdev/tether/sweep"
)

func (a *app) cleanCommand() *cobra.Command {
	var (
		olderThan string
		dryRun    bool
	)
	c := &cobra.Command{
		Use:   "clean",
		Short: "remove ended sessions whose turns are all saved",
		Long: `Sweep, then remove the records of sessions that ended longer ago than
--older-than and whose turns are all in checkpoints. Checkpoints are
never removed.`,
		Example: `  tether-sweep clean --dry-run
  tether-sweep clean --older-than 7d`,
		GroupID: "sessions",
		Args:    noArgs,
		RunE:    func(*cobra.Command, []string) error { return a.clean(olderThan, dryRun) },
	}
	c.Flags().StringVar(&olderThan, "older-than", "30d", "remove sessions that ended longer ago than this")
	c.Flags().BoolVar(&dryRun, "dry-run", false, "say what would be removed, remove nothing")
	return c
}

func (a *app) clean(olderThan string, dryRun bool) error {
	age, err := state.ParseAge(olderThan)
	if err != nil {
		return usagef("--older-than: %v", err)
	}
	w, err := a.open()
	if err != nil {
		return err
	}
	// Sweep first, so sessions whose agent is gone are finalized and their
	// turns saved before anything is removed.
	if _, err := a.sweep(w, sweepFlags{dryRun: dryRun}, false); err != nil {
		return err
	}
	done, err := sweep.Clean(w.repo, w.store, time.Now().Add(-age), dryRun)
	removed, kept := 0, 0
	for _, c := range done {
		switch {
		case c.Kept != "":
			kept++
			fmt.Fprintf(a.stdout, "kept %s (%s): %s\n", shortID(c.ID), c.Agent, c.Kept)
		case dryRun:
			removed++
			fmt.Fprintf(a.stdout, "would remove %s (%s), ended %s\n", shortID(c.ID), c.Agent, c.EndedAt.Local().Format("2006-01-02"))
		default:
			removed++
			fmt.Fprintf(a.stdout, "removed %s (%s), ended %s\n", shortID(c.ID), c.Agent, c.EndedAt.Local().Format("2006-01-02"))
		}
	}
	switch {
	case removed == 0 && kept == 0:
		fmt.Fprintf(a.stdout, "nothing to clean: no session ended more than %s ago\n", olderThan)
	case removed == 0 && dryRun:
		fmt.Fprintf(a.stdout, "nothing would be removed: %s must stay\n", count(kept, "session", "sessions"))
	case removed == 0:
		fmt.Fprintf(a.stdout, "nothing removed: %s must stay\n", count(kept, "session", "sessions"))
	case dryRun:
		fmt.Fprintf(a.stdout, "would remove %s; their checkpoints would stay on tether/checkpoints/v1\n", count(removed, "session", "sessions"))
	default:
		fmt.Fprintf(a.stdout, "removed %s; their checkpoints stay on tether/checkpoints/v1\n", count(removed, "session", "sessions"))
	}
	return err
}
