package main

import (
	"errors"
	"fmt"
	"time"

	"github.com/tetherdev/tether/sweep"
)

func cmdEnd(a *app, args []string) error {
	fs := a.newFlags("end")
	reason := fs.String("reason", "", "why you ended it, kept with the session")
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return usagef("end takes one SESSION")
	}
	w, err := a.open()
	if err != nil {
		return err
	}
	id, err := w.resolveSession(fs.Arg(0), true)
	if err != nil {
		return err
	}
	now := time.Now()
	tr, results, err := sweep.End(w.repo, w.store, id, *reason, now)
	if errors.Is(err, sweep.ErrAlreadyEnded) {
		if s, lerr := w.store.Load(id); lerr == nil {
			return fmt.Errorf("session %s already ended %s ago (%s)", shortID(id), age(now.Sub(s.EndedAt)), s.EndReason)
		}
	}
	if tr.ID != "" {
		fmt.Fprintf(a.stdout, "ended %s (%s): %s\n", shortID(tr.ID), tr.Agent, tr.Reason)
	}
	for _, r := range results {
		if r.Checkpoint != "" {
			fmt.Fprintf(a.stdout, "checkpoint %s: %d turn(s)\n", r.Checkpoint, r.Turns)
		}
	}
	return err
}
