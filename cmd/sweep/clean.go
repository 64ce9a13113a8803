package main

import (
	"github.com/tetherdev/tether/state"

	"fmt"
	"time"

	"github.com/tetherdev/tether/sweep"
)

func cmdClean(a *app, args []string) error {
	fs := a.newFlags("clean")
	olderThan := fs.String("older-than", "30d", "remove sessions that ended longer ago than this")
	dryRun := fs.Bool("dry-run", false, "say what would be removed, remove nothing")
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usagef("unexpected argument %q", fs.Arg(0))
	}
	age, err := state.ParseAge(*olderThan)
	if err != nil {
		return usagef("--older-than: %v", err)
	}
	w, err := a.open()
	if err != nil {
		return err
	}
	// Sweep first, so sessions whose agent is gone are finalized and their
	// turns saved before anything is removed.
	if _, err := a.sweep(w, sweepFlags{dryRun: *dryRun}, false); err != nil {
		return err
	}
	done, err := sweep.Clean(w.repo, w.store, time.Now().Add(-age), *dryRun)
	removed := 0
	for _, c := range done {
		switch {
		case c.Kept != "":
			fmt.Fprintf(a.stdout, "kept    %s (%s): %s\n", shortID(c.ID), c.Agent, c.Kept)
		case *dryRun:
			fmt.Fprintf(a.stdout, "would remove %s (%s), ended %s\n", shortID(c.ID), c.Agent, c.EndedAt.Local().Format("2006-01-02"))
		default:
			removed++
			fmt.Fprintf(a.stdout, "removed %s (%s), ended %s\n", shortID(c.ID), c.Agent, c.EndedAt.Local().Format("2006-01-02"))
		}
	}
	if !*dryRun {
		fmt.Fprintf(a.stdout, "%d session(s) removed; their checkpoints stay on tether/checkpoints/v1\n", removed)
	}
	return err
}
