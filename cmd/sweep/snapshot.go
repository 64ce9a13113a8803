package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/tetherdev/tether/snapshot"
	"github.com/tetherdev/tether/state"
)

// snapshotCommand is what tether-hook starts in the background at a turn's
// start and end: it records the worktree for that boundary. Hidden: people
// never need to run it.
func (a *app) snapshotCommand() *cobra.Command {
	var session, at string
	var turn int
	c := &cobra.Command{
		Use:    "snapshot --session ID --turn N --at start|end",
		Short:  "record the worktree at a turn's start or end (run by tether-hook)",
		Hidden: true,
		Args:   noArgs,
		RunE: func(*cobra.Command, []string) error {
			if err := state.ValidateID(session); err != nil {
				return usagef("--session: %v", err)
			}
			if turn < 1 {
				return usagef("--turn must be 1 or more")
			}
			if at != snapshot.Start && at != snapshot.End {
				return usagef("--at must be start or end")
			}
			return a.snapshot(session, turn, at)
		},
	}
	c.Flags().StringVar(&session, "session", "", "the session")
	c.Flags().IntVar(&turn, "turn", 0, "the turn")
	c.Flags().StringVar(&at, "at", "", "start or end")
	return c
}

func (a *app) snapshot(session string, turn int, at string) error {
	w, err := a.open()
	if err != nil {
		return err
	}
	e, err := snapshot.New(w.repo, w.store).CaptureTurn(session, turn, at)
	if err != nil {
		w.store.Logger().Warn("capture failed", state.LogKeySession, session, "turn", turn, "at", at, state.LogKeyError, err.Error())
		return fmt.Errorf("turn %d %s: %w", turn, at, err)
	}
	w.store.Logger().Info("captured", state.LogKeySession, session, "turn", turn, "at", at, "tree", e.Tree)
	return nil
}
