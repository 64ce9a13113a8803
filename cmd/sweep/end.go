package main

import (
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/tetherdev/tether/sweep"
)

func (a *app) endCommand() *cobra.Command {
	var reason string
	c := &cobra.Command{
		Use:   "end SESSION",
		Short: "end a session by hand",
		Long: `End a session that has not ended, by its ID or a unique prefix of at least four
characters, and save its pending turns as a checkpoint. Use it for a session
whose agent tether cannot see end (another host, another PID namespace).`,
		Example:           `  tether-sweep end 3f2a9c1e --reason 'moved to another machine'`,
		GroupID:           "sessions",
		Args:              exactArgs(1, "end takes one SESSION"),
		ValidArgsFunction: a.completeSessions(false),
		RunE:              func(_ *cobra.Command, args []string) error { return a.end(args[0], reason) },
	}
	c.Flags().StringVar(&reason, "reason", "", "why you ended it, kept with the session")
	return c
}

func (a *app) end(arg, reason string) error {
	w, id, err := a.openSession(arg, true)
	if err != nil {
		return err
	}
	now := time.Now()
	tr, results, err := sweep.End(w.repo, w.store, id, reason, now)
	if errors.Is(err, sweep.ErrAlreadyEnded) {
		if s, lerr := w.store.Load(id); lerr == nil {
			return fmt.Errorf("session %s already ended %s: %s", shortID(id), ago(now.Sub(s.EndedAt)), sessionEnding(s).words())
		}
	}
	if tr.ID != "" {
		fmt.Fprintf(a.stdout, "ended %s (%s): %s\n", shortID(tr.ID), tr.Agent, ending{reason: tr.Reason, note: reason}.words())
	}
	for _, r := range results {
		if r.Checkpoint != "" {
			fmt.Fprintf(a.stdout, "checkpoint %s: %s\n", r.Checkpoint, count(r.Turns, "turn", "turns"))
		}
	}
	return err
}
