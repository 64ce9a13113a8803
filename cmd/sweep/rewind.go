package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/tetherdev/tether/snapshot"
	"github.com/tetherdev/tether/sweep"
)

func (a *app) rewindCommand() *cobra.Command {
	var turn int
	var dryRun, undo, asJSON bool
	c := &cobra.Command{
		Use:   "rewind SESSION",
		Short: "put back the files a turn changed, as they were when it started",
		Long: `Put back the paths that a turn of a session changed (--turn N; by default the
last turn, typically the one an agent was killed in), as they were when the
turn started: files it modified are restored, files it created removed, files
it deleted re-created. No other path is touched. A path changed after the turn
by someone else is never overwritten: rewind refuses, naming it. What rewind
overwrites is kept, and --undo puts it back. --dry-run lists what it would do.
Secret files (.env, keys, credentials: the files captures never hold) are
never touched: rewind names those the turn may have changed, and leaves them.`,
		Example: `  tether-sweep rewind 3f2a9c1e --dry-run
  tether-sweep rewind 3f2a9c1e --turn 2
  tether-sweep rewind 3f2a9c1e --undo`,
		GroupID:           "sessions",
		Args:              exactArgs(1, "rewind takes one SESSION"),
		ValidArgsFunction: a.completeSessions(true),
		RunE: func(_ *cobra.Command, args []string) error {
			if turn < 0 {
				return usagef("--turn must be 1 or more")
			}
			if undo && turn != 0 {
				return usagef("--undo reverses the last rewind: it takes no --turn")
			}
			return a.rewind(args[0], turn, undo, dryRun, asJSON)
		},
	}
	c.Flags().IntVar(&turn, "turn", 0, "the turn to rewind (default: the last)")
	c.Flags().BoolVar(&dryRun, "dry-run", false, "list what it would do, change nothing")
	c.Flags().BoolVar(&undo, "undo", false, "put back what the session's last rewind overwrote")
	c.Flags().BoolVar(&asJSON, "json", false, "print what it did as JSON")
	return c
}

func (a *app) rewind(arg string, turn int, undo, dryRun, asJSON bool) error {
	w, id, err := a.openSession(arg, true)
	if err != nil {
		return err
	}
	r, err := sweep.Rewind(w.repo, w.store, id, turn, undo, dryRun)
	var changed *sweep.ChangedSinceError
	if errors.As(err, &changed) {
		return fmt.Errorf("session %s, %w", shortID(id), err)
	}
	if err != nil {
		return fmt.Errorf("rewind session %s: %w", shortID(id), err)
	}
	if asJSON {
		return json.NewEncoder(a.stdout).Encode(r)
	}
	what := fmt.Sprintf("turn %d of %s", r.Turn, shortID(id))
	if undo {
		what = "the rewind of " + what
	}
	defer a.printLeftAlone(r.LeftAlone)
	switch {
	case len(r.Actions) == 0:
		fmt.Fprintf(a.stdout, "%s: nothing to put back\n", what)
		return nil
	case dryRun:
		fmt.Fprintf(a.stdout, "would rewind %s (dry run):\n", what)
	case undo:
		fmt.Fprintf(a.stdout, "undid %s:\n", what)
	default:
		fmt.Fprintf(a.stdout, "rewound %s:\n", what)
	}
	for _, l := range snapshot.Describe(r.Actions) {
		fmt.Fprintf(a.stdout, "  %s\n", l)
	}
	for _, c := range committedNotes(r.Committed, dryRun) {
		fmt.Fprintf(a.stdout, "note: %s\n", c)
	}
	if !dryRun {
		fmt.Fprintf(a.stdout, "what it overwrote is kept: tether-sweep rewind %s --undo\n", shortID(id))
	}
	return nil
}

// printLeftAlone names the secret files a rewind did not touch.
func (a *app) printLeftAlone(paths []string) {
	if len(paths) == 0 {
		return
	}
	fmt.Fprintf(a.stdout, "left alone, as secret files (captures never hold them, rewind never touches them): %s\n", strings.Join(paths, ", "))
}

// committedNotes says, commit by commit, which of the paths a rewind puts
// back hold a change already committed: the rewind undoes it in the
// worktree, not in history.
func committedNotes(committed map[string]string, dryRun bool) []string {
	byCommit := map[string][]string{}
	for p, c := range committed {
		byCommit[c] = append(byCommit[c], p)
	}
	verb := "undoes"
	if dryRun {
		verb = "would undo"
	}
	var out []string
	for _, c := range slices.Sorted(maps.Keys(byCommit)) {
		paths := slices.Sorted(slices.Values(byCommit[c]))
		out = append(out, fmt.Sprintf("the turn's change to %s is in commit %s: the rewind %s it in the worktree only (git revert %s undoes the commit)",
			strings.Join(paths, ", "), shortID(c), verb, shortID(c)))
	}
	return out
}
