package sweep

import (
	"fmt"
	"time"

	"github.com/tetherdev/tether/capture"
	"github.com/tetherdev/tether/checkpoint"
	"github.com/tetherdev/tether/gitdir"
	"github.com/tetherdev/tether/state"
)

// Cleaned is what Clean did with one ended session.
type Cleaned struct {
	ID      string    `json:"id"`
	Agent   string    `json:"agent"`
	EndedAt time.Time `json:"ended_at"`
	Removed bool      `json:"removed"`
	Kept    string    `json:"kept,omitempty"` // why it was kept
}

// Clean deletes the state of sessions that ended before cutoff, once every
// one of their turns is in a checkpoint: pending turns are
// condensed first, and a session whose turns can't be saved is kept.
// Sessions a person must look at (a closed, unmerged pull request) are
// never removed automatically.
func Clean(repo gitdir.Repo, st *state.Store, cutoff time.Time, dryRun bool) ([]Cleaned, error) {
	ended, _, err := st.ListEnded()
	if err != nil {
		return nil, fmt.Errorf("list ended sessions: %w", err)
	}
	var cp *checkpoint.Repo
	var out []Cleaned
	for _, s := range ended {
		if s.EndedAt.IsZero() || !s.EndedAt.Before(cutoff) {
			continue
		}
		c := Cleaned{ID: s.ID, Agent: s.Agent, EndedAt: s.EndedAt}
		switch {
		case s.GitHub != nil && s.GitHub.State == "pr-closed":
			c.Kept = "its pull request was closed unmerged: end it yourself after a look"
		case s.HasPending() && dryRun:
			c.Kept = "pending turns would be condensed first"
		case s.HasPending():
			if cp == nil {
				if cp, err = openCheckpoints(repo, st); err != nil {
					return out, fmt.Errorf("open repository: %w", err)
				}
			}
			if _, err := condense(st, cp, []string{s.ID}, nil); err != nil {
				c.Kept = "its pending turns could not be saved: " + err.Error()
			} else if fresh, err := st.Load(s.ID); err != nil || fresh.HasPending() {
				c.Kept = "its pending turns could not be saved"
			}
		}
		if c.Kept == "" && !dryRun {
			if err := st.Remove(s.ID); err != nil {
				c.Kept = err.Error()
			} else {
				c.Removed = true
				// The captures of its worktree go with it.
				if err := capture.New(repo, st).Remove(s.ID); err != nil {
					st.Logger().Warn("clean: remove captures", state.LogKeySession, s.ID, state.LogKeyError, err.Error())
				}
				// Its checkpoints stay; there is no session
				// left to link them from.
				if err := st.ClearMark(state.MarkUnlinked, s.ID); err != nil {
					return out, err
				}
				st.Logger().Info("cleaned", "session", s.ID, "agent", s.Agent, "ended_at", s.EndedAt)
			}
		}
		out = append(out, c)
	}
	return out, nil
}
